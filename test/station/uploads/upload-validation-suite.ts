// What an upload initiation and its chunks must be: field rules, names, sizes and the
// Station's limits (docs/protocol.md: Names and fields). Runs on PGlite and on
// PostgreSQL. One Station for the file with MAX_UPLOAD_BYTES=3000000.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, test } from 'node:test';
import type { OverviewScout } from '../../../src/shared/protocol/overview.ts';
import { assertError } from '../../helpers/assertions.ts';
import { Client } from '../../helpers/http.ts';
import { type ArchiveMeta, call, initiate } from '../../helpers/uploads.ts';
import {
  assertOk,
  instanceId,
  MAX_UPLOAD,
  rawRequest,
  STORED_NAME,
  type StartStation,
  unique,
  useStation,
} from './uploads-kit.ts';

export function uploadValidationSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStation(start, 'main', { MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
    const { mint, store, meta } = ctx;

    describe('initiation validation', () => {
      let token: string;
      const scout = 'validation-scout';
      before(async () => {
        token = (await mint(ctx.admin, { shared: true, max_registrations: 10 })).credential;
      });

      test('each missing or malformed field is 400 with a detail naming it', async () => {
        const data = randomBytes(1000);
        const valid = () =>
          meta(data, { scout_id: scout, scout_instance_id: 'validation000001', job_name: 'docs' });
        const required: Array<keyof ArchiveMeta> = [
          'scout_id',
          'scout_instance_id',
          'job_name',
          'fingerprint',
          'timestamp',
          'archive_format',
          'archive_size_bytes',
          'archive_sha256',
          'idempotency_key',
        ];
        for (const field of required) {
          const body: Record<string, unknown> = { ...valid(), [field]: undefined };
          const reply = await call(ctx.station.url, 'POST', '/backup/uploads/initiate', token, body);
          assertError(reply, 400, new RegExp(field));
        }

        const malformed: Array<[keyof ArchiveMeta, unknown]> = [
          ['scout_id', '../x'],
          ['scout_id', '.'],
          ['scout_id', '..'],
          ['scout_id', ''],
          ['scout_id', 'a'.repeat(65)],
          ['scout_id', 'a b'],
          ['scout_id', 42],
          ['scout_instance_id', 'a/b'],
          ['scout_instance_id', '.hidden'],
          ['job_name', '.hidden'],
          ['job_name', 'docs/../../etc'],
          ['job_name', 'docs\\x'],
          ['fingerprint', 'ABC'],
          ['fingerprint', 'ABCDEF01'],
          ['fingerprint', 'abcdef0'],
          ['fingerprint', 'a'.repeat(63)],
          ['timestamp', '2026-11-01 12:00:00'],
          ['timestamp', '2026-11-01T12:00:00'],
          ['timestamp', '2026-11-01T12:00:00.000Z'],
          ['timestamp', '2026-11-01T12:00:00+01:00'],
          ['timestamp', '2026-02-30T12:00:00Z'],
          ['archive_format', 'zip'],
          ['archive_format', 'tar.gz'],
          ['archive_size_bytes', 0],
          ['archive_size_bytes', -1],
          ['archive_size_bytes', 1.5],
          ['archive_size_bytes', '1000'],
          ['archive_sha256', 'abc123'],
          ['archive_sha256', 'A'.repeat(64)],
          ['archive_sha256', 'a'.repeat(65)],
          ['idempotency_key', ''],
          ['encryption_key_fingerprint', 'XYZ'],
        ];
        for (const [field, value] of malformed) {
          const body = { ...valid(), [field]: value };
          const reply = await call(ctx.station.url, 'POST', '/backup/uploads/initiate', token, body);
          assert.equal(
            reply.status,
            400,
            `${field}=${JSON.stringify(value)}: ${reply.status} ${JSON.stringify(reply.body)}`,
          );
          assertError(reply, 400, new RegExp(field));
        }

        // The boundaries that are allowed.
        for (const overrides of [
          { fingerprint: 'abcdef01' },
          { fingerprint: 'a'.repeat(64) },
          { scout_instance_id: 'A'.repeat(64) },
          { job_name: 'My_Job-1.v2' },
        ]) {
          assertOk(
            await initiate(ctx.station.url, token, { ...valid(), ...overrides }),
            JSON.stringify(overrides),
          );
        }

        // Nothing of the refused initiations shows up in the overview.
        const overview = await ctx.admin.get('/api/overview?section=snapshots');
        const names = (overview.body.scouts as OverviewScout[]).map((s) => s.scout_id);
        for (const bad of ['../x', '.', '..', 'a b', 'x'])
          assert.ok(!names.includes(bad), `scout ${bad} listed`);
      });

      test('a malformed JSON body is 400', async () => {
        for (const raw of ['{"scout_id":', 'not json', '[1,2', '{"a":1}}']) {
          const reply = await rawRequest(ctx.station.url, 'POST', '/backup/uploads/initiate', token, raw);
          assertError(reply, 400);
        }
        assertError(
          await rawRequest(ctx.station.url, 'POST', '/backup/uploads/initiate', token, '{"scout_id":'),
          400,
          /JSON/i,
        );
        assertError(await rawRequest(ctx.station.url, 'POST', '/backup/uploads/initiate', token, '[]'), 400);
        assertError(
          await rawRequest(ctx.station.url, 'POST', '/backup/uploads/initiate', token, 'null'),
          400,
        );
        assertError(
          await rawRequest(ctx.station.url, 'POST', '/backup/uploads/initiate', token, ''),
          400,
          /scout_id/,
        );
      });
    });

    // ------------------------------------------------------------------ upload flow

    describe('limits', () => {
      test('archive_size_bytes above MAX_UPLOAD_BYTES is 413', async () => {
        const health = await new Client(ctx.station.url).get('/health');
        assert.equal(health.body.max_upload_bytes, MAX_UPLOAD);
        const { credential } = await mint(ctx.admin, {});
        const scout = unique('limit');
        const inst = instanceId();
        const data = randomBytes(100);
        for (const size of [MAX_UPLOAD + 1, 10 * MAX_UPLOAD]) {
          assertError(
            await initiate(
              ctx.station.url,
              credential,
              meta(data, { scout_id: scout, scout_instance_id: inst, archive_size_bytes: size }),
            ),
            413,
          );
        }
        assertOk(
          await initiate(
            ctx.station.url,
            credential,
            meta(data, { scout_id: scout, scout_instance_id: inst, archive_size_bytes: MAX_UPLOAD }),
          ),
          'exactly the limit is accepted',
        );
      });

      test('paused uploads are 503 uploads_paused; resume accepts them again', async () => {
        const { credential } = await mint(ctx.admin, {});
        const scout = unique('pause');
        const inst = instanceId();
        const data = randomBytes(40_000);
        try {
          assertOk(await ctx.admin.post('/api/admin/uploads/pause'));
          const refused = await initiate(
            ctx.station.url,
            credential,
            meta(data, { scout_id: scout, scout_instance_id: inst }),
          );
          assertError(refused, 503, /pause/i);
          assert.equal(refused.body.code, 'uploads_paused');
        } finally {
          assertOk(await ctx.admin.post('/api/admin/uploads/resume'));
        }
        const stored = await store(
          ctx.station.url,
          credential,
          data,
          meta(data, { scout_id: scout, scout_instance_id: inst, job_name: 'docs' }),
        );
        assert.match(stored.stored_as, STORED_NAME);
      });
    });

    // ------------------------------------------------------------------ unusual snapshots
  });
}
