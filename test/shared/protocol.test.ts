// The protocol module's rules on their own: field rules, stored snapshot names, the addresses a
// Scout and the web UIs call, and how an error gets its code.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AppError, conflict, unavailable } from '../../src/core/errors.ts';
import {
  accountPaths,
  integrationPaths,
  scoutPaths,
  stationPaths,
} from '../../src/shared/protocol/api-paths.ts';
import { defaultErrorCode, ERROR_CODES, errorCodeOf } from '../../src/shared/protocol/error-codes.ts';
import {
  isFingerprint,
  isSnapshotFilename,
  isUtcSecond,
  utcSecond,
} from '../../src/shared/protocol/fields.ts';
import { instancePaths, uploadPaths } from '../../src/shared/protocol/paths.ts';
import { parseSnapshotName, snapshotFileName } from '../../src/shared/protocol/snapshot-names.ts';
import { InitiateRequestSchema } from '../../src/shared/protocol/uploads.ts';

const HEX64 = 'a'.repeat(64);

describe('protocol field rules', () => {
  test('a fingerprint is 8 or 64 lowercase hex characters', () => {
    assert.ok(isFingerprint('0123abcd'));
    assert.ok(isFingerprint(HEX64));
    for (const bad of ['', '0123abc', '0123ABCD', `${HEX64}0`, 'a'.repeat(32), '0123abcg'])
      assert.ok(!isFingerprint(bad), bad);
  });

  test('timestamps are real UTC seconds', () => {
    assert.ok(isUtcSecond('2026-02-28T23:59:59Z'));
    for (const bad of [
      '2026-02-30T00:00:00Z',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01 00:00:00Z',
      '2026-01-01T24:00:00Z',
    ])
      assert.ok(!isUtcSecond(bad), bad);
    assert.equal(utcSecond(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05Z');
  });

  test('snapshot file names: made and read back, counters kept; other names are not snapshots', () => {
    const name = snapshotFileName('docs', '2026-01-02T03:04:05Z', HEX64);
    assert.equal(name, 'docs__2026-01-02T03-04-05Z__aaaaaaaa.tar.zst');
    assert.ok(isSnapshotFilename(name));
    assert.deepEqual(parseSnapshotName(name), {
      takenAt: Date.UTC(2026, 0, 2, 3, 4, 5),
      fingerprint8: 'aaaaaaaa',
      counter: null,
    });
    assert.equal(parseSnapshotName(name.replace('.tar.zst', '-3.tar.zst'))?.counter, 3);
    assert.equal(parseSnapshotName('docs.tar.zst'), null);
    assert.ok(!isSnapshotFilename('../x.tar.zst'));
    assert.ok(!isSnapshotFilename('.hidden.tar.zst'));
  });

  test('the initiation schema names the failing field', () => {
    const body = {
      scout_id: 'host-a',
      scout_instance_id: 'inst0001',
      job_name: 'docs',
      fingerprint: HEX64,
      timestamp: '2026-01-02T03:04:05Z',
      archive_format: 'tar.zst',
      archive_size_bytes: 10,
      archive_sha256: HEX64,
      idempotency_key: 'k-1',
    };
    assert.ok(InitiateRequestSchema.safeParse(body).success);
    for (const [field, value] of [
      ['scout_id', '.hidden'],
      ['fingerprint', 'XYZ'],
      ['timestamp', '2026-01-02'],
      ['archive_size_bytes', 0],
      ['archive_sha256', 'abc'],
      ['idempotency_key', 'a b'],
    ] as const) {
      const result = InitiateRequestSchema.safeParse({ ...body, [field]: value });
      assert.ok(!result.success, field);
      assert.equal(result.error.issues[0]?.path[0], field);
      assert.match(result.error.issues[0]?.message ?? '', new RegExp(field));
    }
  });
});

describe('protocol addresses', () => {
  test('every component is encoded; recovery, requests and drills of one instance', () => {
    const paths = instancePaths('host a', 'inst/1');
    assert.equal(paths.snapshots('my job'), '/backup/recovery/host%20a/inst%2F1/my%20job/snapshots');
    assert.equal(
      paths.byFingerprint('docs', '0123abcd'),
      '/backup/recovery/host%20a/inst%2F1/docs/by-fingerprint?fp=0123abcd',
    );
    assert.equal(
      paths.archive('docs', 'a b.tar.zst'),
      '/backup/recovery/host%20a/inst%2F1/docs/archive/a%20b.tar.zst',
    );
    assert.equal(paths.requestArchive('r1'), '/backup/recovery/host%20a/inst%2F1/requests/r1/archive');
    assert.equal(paths.drill('docs'), '/backup/drills/host%20a/inst%2F1/docs');
    assert.equal(uploadPaths.chunk('u/1', 5), '/backup/uploads/u%2F1/chunk?offset=5');
  });

  test('/api addresses: components and query values encoded, empty queries left out', () => {
    const job = { scoutId: 'host a', instanceId: 'inst/1', jobName: 'my job' };
    assert.equal(
      stationPaths.snapshot(job, 'a b.tar.zst'),
      '/api/snapshots/host%20a/inst%2F1/my%20job/a%20b.tar.zst',
    );
    assert.equal(
      stationPaths.snapshotProtect(job, 'x.tar.zst'),
      '/api/snapshots/host%20a/inst%2F1/my%20job/x.tar.zst/protect',
    );
    assert.equal(stationPaths.retentionJob(job), '/api/retention/jobs/host%20a/inst%2F1/my%20job');
    assert.equal(stationPaths.jobSnapshots(job), '/api/jobs/host%20a/inst%2F1/my%20job/snapshots');
    assert.equal(stationPaths.instance('host a', 'inst/1'), '/api/instances/host%20a/inst%2F1');
    assert.equal(stationPaths.instance('h', 'i', true), '/api/instances/h/i?cleanup_missing=true');
    assert.equal(stationPaths.overview(), '/api/overview');
    assert.equal(stationPaths.overview('settings'), '/api/overview?section=settings');
    assert.equal(
      stationPaths.retentionPreview({ job_name: 'a&b', retention_keep_last: 2, scout_id: undefined }),
      '/api/retention/preview?job_name=a%26b&retention_keep_last=2',
    );
    assert.equal(scoutPaths.browse('a b/ü'), '/api/directories/browse?relative_path=a%20b%2F%C3%BC');
    assert.equal(accountPaths.user('u/1'), '/api/users/u%2F1');
    assert.equal(integrationPaths.hookFile('x y.sh'), '/api/hooks/files/x%20y.sh');
    assert.equal(stationPaths.stationTokensOfInstance('h', 'i'), '/api/credentials/instances/h/i');
  });

  test('the web UIs build every /api address through src/shared/protocol/api-paths.ts', () => {
    const web = join(dirname(fileURLToPath(import.meta.url)), '../../web');
    const literal = /['"`]\/api\//;
    const offenders: string[] = [];
    for (const name of readdirSync(web, { recursive: true, encoding: 'utf8' })) {
      if (!/\.tsx?$/.test(name)) continue;
      readFileSync(join(web, name), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (literal.test(line)) offenders.push(`web/${name}:${index + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(offenders, [], 'use accountPaths, integrationPaths, stationPaths or scoutPaths');
  });
});

describe('error codes', () => {
  test('every status has a default code, and every code is listed', () => {
    for (const status of [400, 401, 403, 404, 409, 413, 416, 429, 500, 502, 503, 507, 418, 599])
      assert.ok(Object.hasOwn(ERROR_CODES, defaultErrorCode(status)), String(status));
  });

  test('an AppError takes its code from the factory, from detail.status, or from its status', () => {
    assert.equal(unavailable('paused', 'uploads_paused').code, 'uploads_paused');
    assert.equal(conflict({ status: 'offset_mismatch', next_offset: 4 }).code, 'offset_mismatch');
    assert.equal(conflict({ status: 'something else' }).code, 'conflict');
    assert.equal(new AppError(507, 'full').code, 'insufficient_storage');
    assert.equal(new AppError(500, 'x').code, 'internal');
  });

  test('errorCodeOf reads only known codes from an answer body', () => {
    assert.equal(errorCodeOf({ detail: 'x', code: 'not_bound' }), 'not_bound');
    assert.equal(errorCodeOf({ detail: 'x', code: 'made_up' }), null);
    // An earlier release's name for a code is read as today's.
    assert.equal(errorCodeOf({ detail: 'x', code: 'paused' }), 'uploads_paused');
    assert.equal(errorCodeOf('text'), null);
    assert.equal(errorCodeOf(null), null);
  });
});
