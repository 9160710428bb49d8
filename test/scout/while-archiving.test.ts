// The streamed upload beside the archive (src/scout/upload/while-archiving.ts) when its
// announcement is a promise (the job's fingerprint comes from a walk that may still run while
// the archive starts): nothing reaches the Station before the announcement is known, and an
// upload abandoned before then ends at once and sends nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { StationClient } from '../../src/scout/upload/station-client.ts';
import type { Announcement, UploadTarget } from '../../src/scout/upload/uploader.ts';
import { uploadWhileArchiving } from '../../src/scout/upload/while-archiving.ts';
import type { InitiateRequest } from '../../src/shared/protocol/uploads.ts';

const work = mkdtempSync(join(tmpdir(), 'while-archiving-'));
const target: UploadTarget = {
  scoutId: 'host',
  instanceId: 'inst1',
  jobName: 'docs',
  advertisedUrl: undefined,
};
const announcement: Announcement = {
  scout_id: 'host',
  scout_instance_id: 'inst1',
  job_name: 'docs',
  fingerprint: 'a'.repeat(64),
  timestamp: '2026-11-26T10:00:00Z',
  archive_format: 'tar.zst',
  idempotency_key: 'inst1-docs-s1',
};

/** A Station that records what it is asked and stores whatever is finalized. */
function recordingStation() {
  const calls: string[] = [];
  const initiations: InitiateRequest[] = [];
  const client = {
    baseUrl: 'http://recording',
    async initiate(meta: InitiateRequest) {
      calls.push('initiate');
      initiations.push(meta);
      return {
        upload_id: 'up-1',
        status: 'receiving',
        next_offset: 0,
        archive_size_bytes: null,
        recommended_chunk_size_bytes: 1024 * 1024,
        duplicate: false,
        pruned: [],
        streamed: true,
      };
    },
    async chunk(_id: string, _file: unknown, offset: number, length: number) {
      calls.push(`chunk@${offset}`);
      return { status: 'receiving', next_offset: offset + length, received_bytes: offset + length };
    },
    async finalize() {
      calls.push('finalize');
      return { status: 'stored', stored_as: 'docs__x.tar.zst', pruned: [], duplicate: false };
    },
  };
  return { calls, initiations, client: client as unknown as StationClient };
}

describe('a streamed upload whose announcement comes later', () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  test('nothing reaches the Station before the announcement; the bytes written meanwhile go first', async () => {
    const path = join(work, 'later.tar.zst');
    const station = recordingStation();
    let announce: (a: Announcement) => void = () => {};
    const upload = uploadWhileArchiving({
      client: station.client,
      announce: new Promise<Announcement>((resolve) => {
        announce = resolve;
      }),
      path,
      target,
      signal: new AbortController().signal,
    });
    const bytes = Buffer.alloc(3000, 7);
    writeFileSync(`${path}.part`, bytes);
    upload.onWritten(bytes.length);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(station.calls, [], 'no initiation before the announcement');
    announce(announcement);
    upload.complete({ size: bytes.length, sha256: 'b'.repeat(64) });
    const reply = await upload.result();
    assert.equal(reply.stored_as, 'docs__x.tar.zst');
    assert.deepEqual(station.calls, ['initiate', 'chunk@0', 'finalize']);
    assert.equal(station.initiations[0]?.fingerprint, announcement.fingerprint);
    assert.equal(station.initiations[0]?.streamed, true);
  });

  test('abandoned before the announcement is known: it ends at once and nothing is sent', async () => {
    const station = recordingStation();
    const upload = uploadWhileArchiving({
      client: station.client,
      announce: new Promise<Announcement>(() => {}), // the walk never ends
      path: join(work, 'never.tar.zst'),
      target,
      signal: new AbortController().signal,
    });
    await upload.abandon(new Error('the archive failed'));
    await assert.rejects(upload.result(), /the archive failed/);
    assert.deepEqual(station.calls, []);
  });

  test('an announcement that fails (the walk failed, or found the job unchanged) sends nothing', async () => {
    const station = recordingStation();
    const upload = uploadWhileArchiving({
      client: station.client,
      announce: Promise.reject(new Error('no archive is needed')),
      path: join(work, 'unneeded.tar.zst'),
      target,
      signal: new AbortController().signal,
    });
    await assert.rejects(upload.result(), /no archive is needed/);
    await upload.abandon(new Error('no archive is needed'));
    assert.deepEqual(station.calls, []);
  });
});
