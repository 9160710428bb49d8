// Stored snapshots on the Station: Scout recovery downloads (with Range), the overview,
// snapshot and instance management, integrity verification and start-up reconciliation
// (spec: station.md "Snapshots and instances", "Scout recovery protocol", "Verification
// result", "Authentication", "Errors"; CONTRACT.md "Namespace components", "Storage",
// verification result fields). One server per file; the tests run in order and share it,
// each with its own Scout, instance and job names. The first test must see a Station on
// which verification never ran; the last section stops the Station, edits its disk by
// hand and starts it again.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminClient, type Client, mintAutomationToken, type Reply } from '../helpers/http.ts';
import type { TestServer } from '../helpers/server.ts';
import { type ArchiveMeta, archiveMeta, upload } from '../helpers/uploads.ts';

export type StartStation = () => Promise<TestServer>;

interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The body parsed as JSON when it is JSON (errors), else null. */
  json: ErrorJson | null;
}

interface ErrorJson {
  detail?: unknown;
}

interface Stored {
  data: Buffer;
  meta: ArchiveMeta;
  name: string;
}

interface SnapshotJson {
  name: string;
  size_bytes: number;
  mtime: string;
  missing?: boolean;
}

interface InstanceJson {
  scout_instance_id: string;
  key_fingerprint: string | null;
  advertised_url: string | null;
  last_seen_at: string | null;
  jobs: { job_name: string; snapshots: SnapshotJson[] }[];
}

interface ScoutJson {
  scout_id: string;
  instances: InstanceJson[];
}

interface Failure {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  filename: string;
  problem: string;
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const hex64 = () => randomBytes(32).toString('hex');

/** Archive timestamps that only move forward, so a later upload always has a later name. */
let tick = 0;
function nextTimestamp(): string {
  tick += 1;
  return new Date(Date.UTC(2026, 0, 1) + tick * 61_000).toISOString().replace('.000Z', 'Z');
}

function assertError(
  reply: { status: number; json?: ErrorJson | null; body?: unknown; text?: string },
  status: number,
  about?: RegExp,
) {
  const body = 'json' in reply ? reply.json : reply.body;
  const shown = reply.text ?? JSON.stringify(body);
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${shown}`);
  assert.ok(body && typeof body === 'object', `error body is JSON: ${shown}`);
  const detail = (body as ErrorJson).detail;
  assert.ok(detail !== undefined && detail !== null && detail !== '', `error has a detail: ${shown}`);
  if (about) {
    const text = typeof detail === 'string' ? detail : JSON.stringify(detail);
    assert.match(text, about, `detail ${JSON.stringify(text)} should match ${about}`);
  }
}

function assertIso(value: unknown, what: string): number {
  assert.equal(typeof value, 'string', `${what} is an ISO timestamp: ${JSON.stringify(value)}`);
  const ms = Date.parse(value as string);
  assert.ok(Number.isFinite(ms), `${what} parses: ${value}`);
  return ms;
}

export function storeSuite(label: string, start: StartStation): void {
  describe(label, () => {
    let station: TestServer;
    let admin: Client;
    let readToken: string;
    let restoreToken: string;
    const root = () => join(station.dataDir, 'snapshots');
    const fileOf = (scout: string, instance: string, job: string, name: string) =>
      join(root(), scout, instance, job, name);

    before(async () => {
      station = await start();
      admin = await adminClient(station.url);
      [readToken, restoreToken] = await Promise.all([
        mintAutomationToken(admin, ['read']),
        mintAutomationToken(admin, ['restore']),
      ]);
    });

    after(async () => {
      await station?.dispose();
    });

    async function mintStation(): Promise<string> {
      const reply = await admin.post('/api/credentials/mint', {});
      assert.ok(reply.status === 200 || reply.status === 201, `mint: ${reply.status} ${reply.text}`);
      assert.equal(typeof reply.body.credential, 'string');
      return reply.body.credential;
    }

    /** Uploads `size` random bytes through the Scout protocol and returns what was stored. */
    async function store(
      token: string,
      at: { scout: string; instance: string; job: string },
      options: { size?: number; fingerprint?: string; extra?: Partial<ArchiveMeta> } = {},
    ): Promise<Stored> {
      const data = randomBytes(options.size ?? 2000 + Math.floor(Math.random() * 2000));
      const meta = archiveMeta(data, {
        scout_id: at.scout,
        scout_instance_id: at.instance,
        job_name: at.job,
        timestamp: nextTimestamp(),
        ...(options.fingerprint ? { fingerprint: options.fingerprint } : {}),
        ...options.extra,
      });
      const result = await upload(station.url, token, data, meta);
      assert.equal(result.initiate.status, 200, JSON.stringify(result.initiate.body));
      assert.ok(result.finalize, `the upload was finalized: ${JSON.stringify(result.initiate.body)}`);
      assert.equal(result.finalize.status, 200, JSON.stringify(result.finalize.body));
      assert.equal(result.finalize.body.status, 'stored');
      const name: string = result.finalize.body.stored_as;
      assert.match(name, /\.tar\.zst$/);
      return { data, meta, name };
    }

    async function get(path: string, headers: Record<string, string> = {}): Promise<Download> {
      const res = await fetch(`${station.url}${path}`, { headers });
      const bytes = Buffer.from(await res.arrayBuffer());
      let json: ErrorJson | null = null;
      if ((res.headers.get('content-type') ?? '').includes('json')) {
        try {
          json = JSON.parse(bytes.toString('utf8'));
        } catch {
          json = null;
        }
      }
      return { status: res.status, headers: res.headers, bytes, json };
    }

    const bearer = (token: string, extra: Record<string, string> = {}) => ({
      authorization: `Bearer ${token}`,
      ...extra,
    });
    const session = (extra: Record<string, string> = {}) => ({ cookie: admin.cookieHeader(), ...extra });

    /** A GET with the request target sent exactly as written (fetch would resolve `..`). */
    function rawGet(path: string, headers: Record<string, string>): Promise<Download> {
      const url = new URL(station.url);
      return new Promise((resolve, reject) => {
        const req = httpRequest(
          { host: url.hostname, port: url.port, path, method: 'GET', headers },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (d: Buffer) => chunks.push(d));
            res.on('end', () => {
              const bytes = Buffer.concat(chunks);
              let json: ErrorJson | null = null;
              try {
                json = JSON.parse(bytes.toString('utf8'));
              } catch {
                json = null;
              }
              const h = new Headers();
              for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
              resolve({ status: res.statusCode ?? 0, headers: h, bytes, json });
            });
          },
        );
        req.on('error', reject);
        req.end();
      });
    }

    function assertSnapshotDownload(reply: Download, expected: { data: Buffer; name: string }) {
      assert.equal(
        reply.status,
        200,
        `expected 200, got ${reply.status}: ${reply.bytes.toString('utf8', 0, 300)}`,
      );
      assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
      assert.equal(reply.headers.get('x-relay-snapshot-filename'), expected.name);
      assert.equal(reply.headers.get('content-length'), String(expected.data.length));
      assert.equal(reply.bytes.length, expected.data.length, 'downloaded size');
      assert.ok(reply.bytes.equals(expected.data), 'downloaded bytes are the stored bytes');
    }

    async function overview(query = ''): Promise<Reply> {
      const reply = await admin.get(`/api/overview${query}`);
      assert.equal(reply.status, 200, reply.text);
      return reply;
    }

    async function instanceIn(scout: string, instance: string): Promise<InstanceJson | undefined> {
      const scouts: ScoutJson[] = (await overview('?section=snapshots')).body.scouts;
      return scouts
        .find((s) => s.scout_id === scout)
        ?.instances.find((i) => i.scout_instance_id === instance);
    }

    async function snapshotsOf(scout: string, instance: string, job: string): Promise<SnapshotJson[]> {
      const inst = await instanceIn(scout, instance);
      return inst?.jobs.find((j) => j.job_name === job)?.snapshots ?? [];
    }

    async function verify(): Promise<Reply> {
      const reply = await admin.post('/api/admin/verify');
      assert.equal(reply.status, 200, reply.text);
      return reply;
    }

    const failuresOf = (result: { failures: Failure[] }, filename: string) =>
      result.failures.filter((f) => f.filename === filename);

    test('GET /api/admin/verify before any run reports never_run', async () => {
      const reply = await admin.get('/api/admin/verify');
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.status, 'never_run');
      assert.deepEqual(reply.body.failures ?? [], []);
    });

    describe('Scout recovery downloads', () => {
      const at = { scout: 'rec-scout', instance: 'rec-inst-0001', job: 'documents' };
      const base = `/backup/recovery/${at.scout}/${at.instance}/${at.job}`;
      const fpA = hex64();
      const fpB = hex64();
      let token: string;
      let otherToken: string;
      let first: Stored; // fingerprint A
      let second: Stored; // fingerprint B
      let third: Stored; // fingerprint A again (a forced backup), the newest

      before(async () => {
        token = await mintStation();
        otherToken = await mintStation();
        first = await store(token, at, { fingerprint: fpA, size: 3000 });
        second = await store(token, at, { fingerprint: fpB, size: 3500 });
        third = await store(token, at, { fingerprint: fpA, size: 4000 });
        // The other token belongs to another instance of the same Scout.
        await store(otherToken, { ...at, instance: 'rec-inst-0002' });
      });

      test('latest returns the newest snapshot: exact bytes, octet-stream, filename header, length', async () => {
        assertSnapshotDownload(await get(`${base}/latest`, bearer(token)), third);
      });

      test('by-fingerprint returns the newest match for the 8- and 64-character forms', async () => {
        assertSnapshotDownload(await get(`${base}/by-fingerprint?fp=${fpA}`, bearer(token)), third);
        assertSnapshotDownload(
          await get(`${base}/by-fingerprint?fp=${fpA.slice(0, 8)}`, bearer(token)),
          third,
        );
        assertSnapshotDownload(await get(`${base}/by-fingerprint?fp=${fpB}`, bearer(token)), second);
        assertSnapshotDownload(
          await get(`${base}/by-fingerprint?fp=${fpB.slice(0, 8)}`, bearer(token)),
          second,
        );
      });

      test('by-fingerprint rejects a malformed fp with 400', async () => {
        for (const fp of ['XYZ', fpA.slice(0, 7), fpA.slice(0, 9), fpA.toUpperCase(), `${fpA}0`, '']) {
          const reply = await get(`${base}/by-fingerprint?fp=${encodeURIComponent(fp)}`, bearer(token));
          assertError(reply, 400, /fp|fingerprint/i);
        }
        assertError(await get(`${base}/by-fingerprint`, bearer(token)), 400, /fp|fingerprint/i);
      });

      test('by-fingerprint without a match is 404', async () => {
        const none = hex64();
        assertError(await get(`${base}/by-fingerprint?fp=${none}`, bearer(token)), 404);
        assertError(await get(`${base}/by-fingerprint?fp=${none.slice(0, 8)}`, bearer(token)), 404);
      });

      test('archive/{filename} returns that exact snapshot; an unknown name is 404', async () => {
        assertSnapshotDownload(await get(`${base}/archive/${first.name}`, bearer(token)), first);
        assertSnapshotDownload(await get(`${base}/archive/${second.name}`, bearer(token)), second);
        const unknown = `${at.job}__2020-01-01T00-00-00Z__deadbeef.tar.zst`;
        assertError(await get(`${base}/archive/${unknown}`, bearer(token)), 404);
      });

      test('a job without snapshots has no latest (404)', async () => {
        assertError(
          await get(`/backup/recovery/${at.scout}/${at.instance}/no-such-job/latest`, bearer(token)),
          404,
        );
      });

      test('a token bound to another instance is refused with 403', async () => {
        for (const path of [
          `${base}/latest`,
          `${base}/by-fingerprint?fp=${fpA}`,
          `${base}/archive/${first.name}`,
        ]) {
          const reply = await get(path, bearer(otherToken));
          assertError(reply, 403);
          assert.equal(reply.headers.get('x-relay-snapshot-filename'), null);
        }
      });

      test('an unbound fresh token is refused with 403', async () => {
        const fresh = await mintStation();
        assertError(await get(`${base}/latest`, bearer(fresh)), 403);
        assertError(await get(`${base}/archive/${first.name}`, bearer(fresh)), 403);
      });

      test('no token, an invalid token or an operator session is 401', async () => {
        assertError(await get(`${base}/latest`), 401);
        assertError(await get(`${base}/latest`, bearer('not-a-station-token')), 401);
        assertError(await get(`${base}/archive/${first.name}`, session()), 401);
        // An automation token is not a Station token either.
        assertError(await get(`${base}/latest`, bearer(restoreToken)), 401);
      });

      test('path components breaking the namespace rule are 400 and never reach the disk', async () => {
        // A decoy where `..%2F` traversal out of the job folder would land.
        const decoy = join(station.dataDir, 'decoy.tar.zst');
        writeFileSync(decoy, 'decoy bytes that must never be served');
        const dots = '..%2F..%2F..%2F..%2Fdecoy.tar.zst';
        const cases: [string, RegExp][] = [
          [`/backup/recovery/.x/${at.instance}/${at.job}/latest`, /scout_id/],
          [`/backup/recovery/${at.scout}/.x/${at.job}/latest`, /scout_instance_id/],
          [`/backup/recovery/${at.scout}/${at.instance}/.x/latest`, /job_name/],
          [`/backup/recovery/a%2Fb/${at.instance}/${at.job}/latest`, /scout_id/],
          [`/backup/recovery/${at.scout}/a%2Fb/${at.job}/latest`, /scout_instance_id/],
          [`/backup/recovery/${at.scout}/${at.instance}/..%2F..%2F${at.job}/latest`, /job_name/],
          [`/backup/recovery/${at.scout}/${at.instance}/${at.job}%2F..%2F${at.job}/latest`, /job_name/],
          [`/backup/recovery/${at.scout}/${at.instance}/.x/by-fingerprint?fp=${fpA}`, /job_name/],
          [`${base}/archive/${dots}`, /filename/],
          [`${base}/archive/..%2F${at.job}%2F${first.name}`, /filename/],
          [`${base}/archive/.hidden.tar.zst`, /filename/],
          [`${base}/archive/not-a-snapshot.txt`, /filename/],
        ];
        for (const [path, field] of cases) {
          const reply = await get(path, bearer(token));
          assertError(reply, 400, field);
          assert.ok(!reply.bytes.toString('utf8').includes('decoy bytes'), `${path} served the decoy`);
        }
        assert.ok(existsSync(decoy));
        rmSync(decoy);
      });

      test('a literal ".." path component is 400 naming the problem', async () => {
        // fetch() resolves dot segments itself, so these go out byte for byte.
        const cases: [string, RegExp][] = [
          [`/backup/recovery/${at.scout}/${at.instance}/../latest`, /job_name/],
          [`/backup/recovery/${at.scout}/${at.instance}/%2E%2E/latest`, /job_name/],
          [`/backup/recovery/${at.scout}/../${at.job}/latest`, /scout_instance_id/],
          [`/backup/recovery/../${at.instance}/${at.job}/latest`, /scout_id/],
          [`${base}/archive/..`, /filename/],
        ];
        const problems: string[] = [];
        for (const [path, field] of cases) {
          const reply = await rawGet(path, bearer(token));
          assert.notEqual(reply.status, 200, `${path} must not serve a snapshot`);
          assert.equal(reply.headers.get('x-relay-snapshot-filename'), null, path);
          const detail = JSON.stringify(reply.json?.detail ?? '');
          // Dot segments are refused before routing, so the detail names the segment, not the field.
          if (reply.status !== 400 || !(field.test(detail) || /segments/.test(detail))) {
            problems.push(
              `GET ${path}: expected 400 naming ${field} or the segment, got ${reply.status} ${detail}`,
            );
          }
        }
        assert.deepEqual(problems, []);
      });

      test('Range: bytes=10-99 is 206 with Content-Range and exactly those bytes', async () => {
        const size = third.data.length;
        const reply = await get(`${base}/latest`, bearer(token, { range: 'bytes=10-99' }));
        assert.equal(reply.status, 206);
        assert.equal(reply.headers.get('content-range'), `bytes 10-99/${size}`);
        assert.equal(reply.headers.get('content-length'), '90');
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.equal(reply.headers.get('x-relay-snapshot-filename'), third.name);
        assert.ok(reply.bytes.equals(third.data.subarray(10, 100)));
      });

      test('Range: an open range bytes=100- and a suffix bytes=-50', async () => {
        const size = third.data.length;
        const open = await get(`${base}/latest`, bearer(token, { range: 'bytes=100-' }));
        assert.equal(open.status, 206);
        assert.equal(open.headers.get('content-range'), `bytes 100-${size - 1}/${size}`);
        assert.equal(open.headers.get('content-length'), String(size - 100));
        assert.ok(open.bytes.equals(third.data.subarray(100)));

        const suffix = await get(`${base}/latest`, bearer(token, { range: 'bytes=-50' }));
        assert.equal(suffix.status, 206);
        assert.equal(suffix.headers.get('content-range'), `bytes ${size - 50}-${size - 1}/${size}`);
        assert.equal(suffix.headers.get('content-length'), '50');
        assert.ok(suffix.bytes.equals(third.data.subarray(size - 50)));

        // The exact archive route takes ranges too.
        const exact = await get(`${base}/archive/${first.name}`, bearer(token, { range: 'bytes=0-0' }));
        assert.equal(exact.status, 206);
        assert.equal(exact.headers.get('content-range'), `bytes 0-0/${first.data.length}`);
        assert.ok(exact.bytes.equals(first.data.subarray(0, 1)));
      });

      test('Range: an unsatisfiable range is 416 with Content-Range bytes */SIZE', async () => {
        const size = third.data.length;
        for (const range of [`bytes=${size}-`, `bytes=${size}-${size + 10}`, `bytes=${size + 1000}-`]) {
          const reply = await get(`${base}/latest`, bearer(token, { range }));
          assert.equal(reply.status, 416, `${range}: ${reply.bytes.toString('utf8', 0, 200)}`);
          assert.equal(reply.headers.get('content-range'), `bytes */${size}`, range);
          assert.ok(!reply.bytes.equals(third.data), 'no snapshot bytes with a 416');
        }
      });

      test('an interrupted download resumed by ranges reassembles the identical file', async () => {
        const size = third.data.length;
        // Start a full download and give up after the first bytes arrive.
        const res = await fetch(`${station.url}${base}/latest`, { headers: bearer(token) });
        assert.equal(res.status, 200);
        const reader = res.body?.getReader();
        assert.ok(reader);
        const firstChunk = await reader.read();
        await reader.cancel();
        const parts: Buffer[] = [Buffer.from(firstChunk.value ?? new Uint8Array()).subarray(0, 777)];
        let have = parts[0]?.length ?? 0;
        // Then fetch the rest in small pieces, each starting where the last ended.
        while (have < size) {
          const end = Math.min(have + 999, size - 1);
          const piece = await get(`${base}/latest`, bearer(token, { range: `bytes=${have}-${end}` }));
          assert.equal(piece.status, 206);
          assert.equal(piece.headers.get('content-range'), `bytes ${have}-${end}/${size}`);
          assert.equal(piece.headers.get('x-relay-snapshot-filename'), third.name);
          parts.push(piece.bytes);
          have += piece.bytes.length;
        }
        const whole = Buffer.concat(parts);
        assert.equal(whole.length, size);
        assert.equal(sha256(whole), third.meta.archive_sha256);
        assert.ok(whole.equals(third.data));
      });
    });

    describe('overview', () => {
      const at = { scout: 'ov-scout', instance: 'ov-inst-0001', job: 'photos' };
      const keyFingerprint = hex64();
      const advertisedUrl = 'http://ov-scout.example:6556';
      const stored: Stored[] = [];
      let otherJob: Stored;

      before(async () => {
        const token = await mintStation();
        const extra = { encryption_key_fingerprint: keyFingerprint, advertised_url: advertisedUrl };
        stored.push(await store(token, at, { extra }));
        stored.push(await store(token, at, { extra }));
        otherJob = await store(token, { ...at, job: 'music' }, { extra });
      });

      test('GET /api/overview has settings, storage and the snapshot tree', async () => {
        const now = Date.now();
        const { body } = await overview();
        assert.deepEqual(Object.keys(body).sort(), ['scouts', 'settings', 'storage']);
        assert.equal(typeof body.settings.retention_keep_last, 'number');

        const { storage } = body;
        assert.equal(storage.backup_root, root());
        for (const field of ['total_bytes', 'free_bytes', 'used_bytes', 'snapshot_count', 'snapshot_bytes']) {
          assert.ok(
            Number.isSafeInteger(storage[field]) && storage[field] >= 0,
            `${field}: ${storage[field]}`,
          );
        }
        assert.ok(storage.total_bytes > 0);
        assert.ok(storage.free_bytes <= storage.total_bytes);
        assert.ok(storage.used_bytes <= storage.total_bytes);

        // The counts agree with the tree in the same answer.
        const live = (body.scouts as ScoutJson[])
          .flatMap((s) => s.instances)
          .flatMap((i) => i.jobs)
          .flatMap((j) => j.snapshots)
          .filter((s) => !s.missing);
        assert.equal(storage.snapshot_count, live.length);
        assert.equal(
          storage.snapshot_bytes,
          live.reduce((sum, s) => sum + s.size_bytes, 0),
        );

        const scout = (body.scouts as ScoutJson[]).find((s) => s.scout_id === at.scout);
        assert.ok(scout, `scout ${at.scout} in the overview`);
        assert.equal(scout.instances.length, 1);
        const inst = scout.instances[0];
        assert.ok(inst);
        assert.equal(inst.scout_instance_id, at.instance);
        assert.equal(inst.key_fingerprint, keyFingerprint);
        assert.equal(inst.advertised_url, advertisedUrl);
        const seen = assertIso(inst.last_seen_at, 'last_seen_at');
        assert.ok(Math.abs(seen - now) < 5 * 60_000, `last_seen_at ${inst.last_seen_at} is recent`);
        assert.deepEqual(inst.jobs.map((j) => j.job_name).sort(), ['music', 'photos']);

        const expectations: [string, Stored[]][] = [
          ['photos', stored],
          ['music', [otherJob]],
        ];
        for (const [job, list] of expectations) {
          const snaps: SnapshotJson[] = inst.jobs.find((j) => j.job_name === job)?.snapshots ?? [];
          assert.deepEqual(snaps.map((s) => s.name).sort(), list.map((s) => s.name).sort());
          for (const expected of list) {
            const snap = snaps.find((s) => s.name === expected.name);
            assert.ok(snap);
            assert.match(snap.name, /\.tar\.zst$/);
            assert.equal(snap.size_bytes, expected.data.length);
            const mtime = assertIso(snap.mtime, 'mtime');
            const onDisk = statSync(fileOf(at.scout, at.instance, job, expected.name)).mtimeMs;
            assert.ok(Math.abs(mtime - onDisk) < 1000, `mtime ${snap.mtime} matches the file`);
            assert.notEqual(snap.missing, true);
          }
        }
      });

      test('?section=storage returns only storage, ?section=snapshots only scouts', async () => {
        const storage = await overview('?section=storage');
        assert.deepEqual(Object.keys(storage.body), ['storage']);
        assert.equal(storage.body.storage.backup_root, root());
        assert.equal(typeof storage.body.storage.snapshot_count, 'number');

        const snapshots = await overview('?section=snapshots');
        assert.deepEqual(Object.keys(snapshots.body), ['scouts']);
        assert.ok((snapshots.body.scouts as ScoutJson[]).some((s) => s.scout_id === at.scout));

        const settings = await overview('?section=settings');
        assert.deepEqual(Object.keys(settings.body), ['settings']);

        assertError(await admin.get('/api/overview?section=nonsense'), 400);
      });

      test('the overview needs a signed-in operator', async () => {
        const res = await fetch(`${station.url}/api/overview`);
        assert.equal(res.status, 401);
      });

      test('GET /api/overview latency on a small index (reported)', async (t) => {
        await overview();
        const times: number[] = [];
        for (let i = 0; i < 30; i += 1) {
          const started = performance.now();
          await overview();
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        const pick = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
        const count = (await overview('?section=storage')).body.storage.snapshot_count;
        t.diagnostic(
          `GET /api/overview over ${count} snapshots: median ${pick(0.5).toFixed(1)} ms, ` +
            `p95 ${pick(0.95).toFixed(1)} ms, max ${pick(1).toFixed(1)} ms (30 requests)`,
        );
      });
    });

    describe('snapshot management', () => {
      const at = { scout: 'mg-scout', instance: 'mg-inst-0001', job: 'mail' };
      const pathOf = (name: string) => `/api/snapshots/${at.scout}/${at.instance}/${at.job}/${name}`;
      let token: string;
      let older: Stored;
      let newer: Stored;

      before(async () => {
        token = await mintStation();
        older = await store(token, at);
        newer = await store(token, at);
      });

      test('GET downloads the stored bytes with the admin session', async () => {
        const reply = await get(pathOf(older.name), session());
        assert.equal(reply.status, 200);
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.equal(reply.headers.get('content-length'), String(older.data.length));
        assert.ok(reply.bytes.equals(older.data));
      });

      test('GET works with a restore-scope automation token, not with a read token', async () => {
        const reply = await get(pathOf(newer.name), bearer(restoreToken));
        assert.equal(reply.status, 200);
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.ok(reply.bytes.equals(newer.data));
        assertError(await get(pathOf(newer.name), bearer(readToken)), 403);
        assertError(await get(pathOf(newer.name)), 401);
        // A Station token grants nothing on /api.
        assertError(await get(pathOf(newer.name), bearer(token)), 401);
      });

      test('DELETE needs an admin with the manage scope', async () => {
        for (const t of [readToken, restoreToken]) {
          const reply = await admin.delete(pathOf(newer.name), { token: t });
          assertError(reply, 403);
        }
        assert.ok(existsSync(fileOf(at.scout, at.instance, at.job, newer.name)));
      });

      test('DELETE removes the file from disk and the overview', async () => {
        const reply = await admin.delete(pathOf(newer.name));
        assert.equal(reply.status, 200, reply.text);
        assert.deepEqual(reply.body, { status: 'deleted', filename: newer.name });
        assert.equal(existsSync(fileOf(at.scout, at.instance, at.job, newer.name)), false);
        const names = (await snapshotsOf(at.scout, at.instance, at.job)).map((s) => s.name);
        assert.deepEqual(names, [older.name]);
        assertError(await get(pathOf(newer.name), session()), 404);
        // Recovery falls back to the remaining snapshot.
        const latest = await get(
          `/backup/recovery/${at.scout}/${at.instance}/${at.job}/latest`,
          bearer(token),
        );
        assertSnapshotDownload(latest, older);
      });

      test('DELETE of an unknown snapshot is 404', async () => {
        assertError(await admin.delete(pathOf(newer.name)), 404);
        assertError(await admin.delete(pathOf(`${at.job}__2020-01-01T00-00-00Z__00000000.tar.zst`)), 404);
        assertError(
          await admin.delete(`/api/snapshots/${at.scout}/no-such-instance/${at.job}/${older.name}`),
          404,
        );
        assert.ok(existsSync(fileOf(at.scout, at.instance, at.job, older.name)));
      });

      test('legacy layout: GET and DELETE /api/snapshots/{scout}/{job}/{file}', async () => {
        const data = randomBytes(1500);
        const name = 'legacy-job__2019-05-01T10-00-00Z__abcd1234.tar.zst';
        const dir = join(root(), 'legacy-scout', 'legacy-job');
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, name), data);
        const path = `/api/snapshots/legacy-scout/legacy-job/${name}`;

        const reply = await get(path, session());
        assert.equal(reply.status, 200, reply.bytes.toString('utf8', 0, 200));
        assert.equal(reply.headers.get('content-type'), 'application/octet-stream');
        assert.equal(reply.headers.get('content-length'), String(data.length));
        assert.ok(reply.bytes.equals(data));
        assert.equal((await get(path, bearer(restoreToken))).status, 200);
        assertError(await get(path, bearer(readToken)), 403);
        assertError(await get('/api/snapshots/legacy-scout/legacy-job/other.tar.zst', session()), 404);

        const removed = await admin.delete(path);
        assert.equal(removed.status, 200, removed.text);
        assert.deepEqual(removed.body, { status: 'deleted', filename: name });
        assert.equal(existsSync(join(dir, name)), false);
        assertError(await get(path, session()), 404);
        assertError(await admin.delete(path), 404);
      });

      test('invalid path components are 400 and never reach the disk', async () => {
        // Where `..%2Fdecoy` in the Scout position would lead: <dataDir>/decoy/<job>/<file>.
        const decoyName = 'decoy__2020-01-01T00-00-00Z__00000000.tar.zst';
        const decoyDir = join(station.dataDir, 'decoy', at.job);
        mkdirSync(decoyDir, { recursive: true });
        writeFileSync(join(decoyDir, decoyName), 'decoy bytes that must never be served');
        writeFileSync(join(decoyDir, '..', decoyName), 'decoy bytes that must never be served');
        const cases: [string, RegExp][] = [
          [`/api/snapshots/.x/${at.instance}/${at.job}/${older.name}`, /scout_id/],
          [`/api/snapshots/${at.scout}/.x/${at.job}/${older.name}`, /scout_instance_id/],
          [`/api/snapshots/${at.scout}/${at.instance}/.x/${older.name}`, /job_name/],
          [`/api/snapshots/${at.scout}/a%2Fb/${at.job}/${older.name}`, /scout_instance_id/],
          [`/api/snapshots/..%2Fdecoy/${at.job}/${decoyName}`, /scout_id/],
          [`/api/snapshots/..%2Fdecoy/x/${at.job}/${decoyName}`, /scout_id/],
          [
            `/api/snapshots/${at.scout}/${at.instance}/${at.job}/..%2F..%2F..%2F..%2Fdecoy%2F${decoyName}`,
            /filename/,
          ],
          [`/api/snapshots/${at.scout}/${at.instance}/${at.job}/.hidden.tar.zst`, /filename/],
          [`/api/snapshots/${at.scout}/${at.instance}/${at.job}/notes.txt`, /filename/],
          [`/api/snapshots/.x/${at.job}/${older.name}`, /scout_id/],
          [`/api/snapshots/${at.scout}/a%2Fb/${older.name}`, /job_name/],
          [`/api/snapshots/${at.scout}/${at.job}/..%2F..%2F..%2Fdecoy.tar.zst`, /filename/],
        ];
        const problems: string[] = [];
        for (const [path, field] of cases) {
          for (const method of ['GET', 'DELETE'] as const) {
            const reply =
              method === 'GET'
                ? await get(path, session())
                : await admin
                    .delete(path)
                    .then((r) => ({ status: r.status, json: r.body, bytes: Buffer.from(r.text) }));
            assert.ok(
              !reply.bytes.toString('utf8').includes('decoy bytes'),
              `${method} ${path} served the decoy`,
            );
            const detail = JSON.stringify(reply.json?.detail ?? '');
            if (reply.status !== 400 || !field.test(detail)) {
              problems.push(`${method} ${path}: expected 400 naming ${field}, got ${reply.status} ${detail}`);
            }
          }
        }
        assert.ok(existsSync(join(decoyDir, decoyName)), 'the decoy was not deleted');
        assert.ok(existsSync(join(decoyDir, '..', decoyName)), 'the decoy was not deleted');
        assert.ok(existsSync(fileOf(at.scout, at.instance, at.job, older.name)));
        rmSync(join(station.dataDir, 'decoy'), { recursive: true, force: true });
        assert.deepEqual(problems, []);
      });
    });

    describe('instance deletion', () => {
      const scout = 'del-scout';

      test('DELETE /api/instances/{scout}/{instance} removes every snapshot; the token still works', async () => {
        const at = { scout, instance: 'del-inst-0001', job: 'alpha' };
        const token = await mintStation();
        const a1 = await store(token, at);
        const a2 = await store(token, at);
        const b1 = await store(token, { ...at, job: 'beta' });
        // A neighbour instance of the same Scout stays untouched.
        const neighbour = await store(await mintStation(), { ...at, instance: 'del-inst-0002' });
        for (const [job, s] of [
          ['alpha', a1],
          ['alpha', a2],
          ['beta', b1],
        ] as const) {
          assert.ok(existsSync(fileOf(scout, at.instance, job, s.name)));
        }

        assertError(await admin.delete(`/api/instances/${scout}/${at.instance}`, { token: readToken }), 403);
        const reply = await admin.delete(`/api/instances/${scout}/${at.instance}`);
        assert.equal(reply.status, 200, reply.text);
        for (const [job, s] of [
          ['alpha', a1],
          ['alpha', a2],
          ['beta', b1],
        ] as const) {
          assert.equal(existsSync(fileOf(scout, at.instance, job, s.name)), false, `${s.name} is gone`);
        }
        const inst = await instanceIn(scout, at.instance);
        assert.deepEqual(inst?.jobs.flatMap((j) => j.snapshots) ?? [], [], 'no snapshots in the overview');
        assert.ok(existsSync(fileOf(scout, 'del-inst-0002', 'alpha', neighbour.name)));
        assert.equal((await snapshotsOf(scout, 'del-inst-0002', 'alpha')).length, 1);
        assertError(await get(`/backup/recovery/${scout}/${at.instance}/alpha/latest`, bearer(token)), 404);

        // Deleting an instance does not revoke its Station token.
        const again = await store(token, at);
        assertSnapshotDownload(
          await get(`/backup/recovery/${scout}/${at.instance}/alpha/latest`, bearer(token)),
          again,
        );
        assert.deepEqual(
          (await snapshotsOf(scout, at.instance, 'alpha')).map((s) => s.name),
          [again.name],
        );
      });

      test('DELETE of an unknown instance is 404; invalid components are 400', async () => {
        assertError(await admin.delete(`/api/instances/${scout}/never-existed`), 404);
        assertError(await admin.delete('/api/instances/nobody-here/never-existed'), 404);
        assertError(await admin.delete(`/api/instances/.x/never-existed`), 400, /scout_id/);
        assertError(await admin.delete(`/api/instances/${scout}/a%2Fb`), 400, /scout_instance_id/);
      });

      test('with an indexed file missing: 409 with cleanup_available, then cleanup_missing=true', async () => {
        const at = { scout, instance: 'del-inst-0003', job: 'gamma' };
        const token = await mintStation();
        const kept = await store(token, at);
        const lost = await store(token, at);
        rmSync(fileOf(scout, at.instance, at.job, lost.name));

        const refused = await admin.delete(`/api/instances/${scout}/${at.instance}`);
        assert.equal(refused.status, 409, refused.text);
        assert.equal(typeof refused.body.detail, 'object', refused.text);
        assert.equal(typeof refused.body.detail.message, 'string');
        assert.ok(refused.body.detail.message.length > 0);
        assert.equal(refused.body.detail.cleanup_available, true);
        // A refused deletion deletes nothing.
        assert.ok(existsSync(fileOf(scout, at.instance, at.job, kept.name)));
        assert.equal((await snapshotsOf(scout, at.instance, at.job)).length, 2);

        assertError(await admin.delete(`/api/instances/${scout}/${at.instance}?cleanup_missing=false`), 409);
        const cleaned = await admin.delete(`/api/instances/${scout}/${at.instance}?cleanup_missing=true`);
        assert.equal(cleaned.status, 200, cleaned.text);
        assert.equal(existsSync(fileOf(scout, at.instance, at.job, kept.name)), false);
        assert.deepEqual(await snapshotsOf(scout, at.instance, at.job), []);
        assertError(
          await get(`/backup/recovery/${scout}/${at.instance}/${at.job}/latest`, bearer(token)),
          404,
        );
      });
    });

    describe('verification', () => {
      const at = { scout: 'vf-scout', instance: 'vf-inst-0001', job: 'ledger' };
      let token: string;

      before(async () => {
        token = await mintStation();
        await store(token, at);
      });

      test('POST runs a verification: ok, timestamps, files and bytes checked, no failures', async () => {
        const totals = (await overview('?section=storage')).body.storage;
        const reply = await verify();
        const result = reply.body;
        assert.equal(result.status, 'ok', reply.text);
        const startedAt = assertIso(result.started_at, 'started_at');
        const finishedAt = assertIso(result.finished_at, 'finished_at');
        assert.ok(startedAt <= finishedAt);
        assert.deepEqual(result.failures, []);
        assert.equal(result.checked, totals.snapshot_count);
        assert.equal(result.bytes, totals.snapshot_bytes);
        assert.ok(result.checked >= 1);

        const last = await admin.get('/api/admin/verify');
        assert.equal(last.status, 200);
        assert.deepEqual(last.body, result);
      });

      test('a read token may GET the result but not run a verification', async () => {
        const read = await admin.get('/api/admin/verify', { token: readToken });
        assert.equal(read.status, 200, read.text);
        assert.equal(read.body.status, 'ok');
        assertError(await admin.post('/api/admin/verify', undefined, { token: readToken }), 403);
        assertError(await admin.get('/api/admin/verify', { token: 'bogus-token' }), 401);
      });

      test('a stored file changed on disk (same size) is a checksum_mismatch', async () => {
        const victim = await store(token, at, { size: 4096 });
        const path = fileOf(at.scout, at.instance, at.job, victim.name);
        const bytes = readFileSync(path);
        for (let i = 100; i < 132; i += 1) bytes[i] = (bytes[i] ?? 0) ^ 0xff;
        writeFileSync(path, bytes);
        assert.equal(statSync(path).size, victim.data.length);

        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(failuresOf(result, victim.name), [
          {
            scout_id: at.scout,
            scout_instance_id: at.instance,
            job_name: at.job,
            filename: victim.name,
            problem: 'checksum_mismatch',
          },
        ]);
        assert.equal(result.failures.length, 1, JSON.stringify(result.failures));
        assert.deepEqual((await admin.get('/api/admin/verify')).body, result);
        assert.equal(
          (await admin.delete(`/api/snapshots/${at.scout}/${at.instance}/${at.job}/${victim.name}`)).status,
          200,
        );
      });

      test('an indexed file deleted by hand is missing', async () => {
        const victim = await store(token, at);
        rmSync(fileOf(at.scout, at.instance, at.job, victim.name));
        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(failuresOf(result, victim.name), [
          {
            scout_id: at.scout,
            scout_instance_id: at.instance,
            job_name: at.job,
            filename: victim.name,
            problem: 'missing',
          },
        ]);
        assert.equal(result.failures.length, 1, JSON.stringify(result.failures));
        // Removing the record clears the problem.
        const removed = await admin.delete(
          `/api/snapshots/${at.scout}/${at.instance}/${at.job}/${victim.name}`,
        );
        assert.equal(removed.status, 200, removed.text);
        assert.equal((await verify()).body.status, 'ok');
      });
    });

    describe('restart: verification result and start-up reconciliation', () => {
      const vf = { scout: 'vf-scout', instance: 'vf-inst-0001', job: 'ledger' };
      const rc = { scout: 'rc-scout', instance: 'rc-inst-0001', job: 'projects' };
      const unindexedName = `${vf.job}__2025-06-01T00-00-00Z__abcdef12.tar.zst`;
      const copiedName = 'copied__2025-07-01T08-30-00Z__0badf00d.tar.zst';
      const manualName = 'manual.tar.zst';
      const incomingName = `.incoming-${rc.job}__2025-01-01T00-00-00Z__12345678.tar.zst`;
      const strayPart = `${randomBytes(8).toString('hex')}.part`;
      let token: string;
      let kept: Stored;
      let deleted: Stored;
      let lastResult: unknown;

      before(async () => {
        token = await mintStation();
        kept = await store(token, rc, { size: 3000 });
        deleted = await store(token, rc, { size: 3000 });
      });

      test('an unknown .tar.zst file in an instance job folder is unindexed', async () => {
        writeFileSync(fileOf(vf.scout, vf.instance, vf.job, unindexedName), randomBytes(1234));
        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(result.failures, [
          {
            scout_id: vf.scout,
            scout_instance_id: vf.instance,
            job_name: vf.job,
            filename: unindexedName,
            problem: 'unindexed',
          },
        ]);
        lastResult = result;
      });

      test('after a restart with files changed by hand, the index follows the disk', async () => {
        await station.stop();
        // By hand while the Station is down: a new archive, an indexed file gone, leftovers.
        const copiedDir = join(root(), rc.scout, rc.instance, 'copied');
        mkdirSync(copiedDir, { recursive: true });
        copyFileSync(fileOf(rc.scout, rc.instance, rc.job, kept.name), join(copiedDir, copiedName));
        const manualDir = join(root(), rc.scout, rc.instance, 'manual-job');
        mkdirSync(manualDir, { recursive: true });
        writeFileSync(join(manualDir, manualName), randomBytes(900));
        rmSync(fileOf(rc.scout, rc.instance, rc.job, deleted.name));
        writeFileSync(fileOf(rc.scout, rc.instance, rc.job, incomingName), randomBytes(500));
        writeFileSync(join(station.dataDir, 'staging', strayPart), randomBytes(700));

        const t0 = performance.now();
        station = await station.restart();
        const restartMs = performance.now() - t0;
        admin = await adminClient(station.url);

        // The last verification result survives the restart.
        const last = await admin.get('/api/admin/verify');
        assert.equal(last.status, 200, last.text);
        assert.deepEqual(last.body, lastResult);

        // Leftovers are gone.
        assert.equal(
          existsSync(fileOf(rc.scout, rc.instance, rc.job, incomingName)),
          false,
          '.incoming-* removed',
        );
        assert.equal(existsSync(join(station.dataDir, 'staging', strayPart)), false, 'stray .part removed');

        // The copied file is indexed and served.
        const copied = (await snapshotsOf(rc.scout, rc.instance, 'copied')).find(
          (s) => s.name === copiedName,
        );
        assert.ok(copied, 'the copied archive is in the overview');
        assert.equal(copied.size_bytes, kept.data.length);
        assertIso(copied.mtime, 'mtime');
        assert.notEqual(copied.missing, true);
        const copiedBase = `/backup/recovery/${rc.scout}/${rc.instance}/copied`;
        assertSnapshotDownload(await get(`${copiedBase}/latest`, bearer(token)), {
          data: kept.data,
          name: copiedName,
        });
        assertSnapshotDownload(await get(`${copiedBase}/archive/${copiedName}`, bearer(token)), {
          data: kept.data,
          name: copiedName,
        });
        assertSnapshotDownload(await get(`${copiedBase}/by-fingerprint?fp=0badf00d`, bearer(token)), {
          data: kept.data,
          name: copiedName,
        });
        // The unindexed file found by verification is indexed now too.
        assert.ok((await snapshotsOf(vf.scout, vf.instance, vf.job)).some((s) => s.name === unindexedName));

        // The deleted file is marked missing (or dropped) and never served.
        const gone = (await snapshotsOf(rc.scout, rc.instance, rc.job)).find((s) => s.name === deleted.name);
        assert.ok(
          gone === undefined || gone.missing === true,
          `deleted file listed as ${JSON.stringify(gone)}`,
        );
        const base = `/backup/recovery/${rc.scout}/${rc.instance}/${rc.job}`;
        assertSnapshotDownload(await get(`${base}/latest`, bearer(token)), kept);
        assertError(await get(`${base}/archive/${deleted.name}`, bearer(token)), 404);
        assertError(await get(`${base}/by-fingerprint?fp=${deleted.meta.fingerprint}`, bearer(token)), 404);
        assertSnapshotDownload(
          await get(`${base}/by-fingerprint?fp=${kept.meta.fingerprint}`, bearer(token)),
          kept,
        );
        const totals = (await overview('?section=storage')).body.storage;
        const live = (await overview('?section=snapshots')).body.scouts as ScoutJson[];
        const liveCount = live
          .flatMap((s) => s.instances)
          .flatMap((i) => i.jobs)
          .flatMap((j) => j.snapshots)
          .filter((s) => !s.missing).length;
        assert.equal(totals.snapshot_count, liveCount, 'a missing file is not counted');
        assert.ok(restartMs > 0);
      });

      test('a reconciled file whose name carries no fingerprint matches no fingerprint', async () => {
        const base = `/backup/recovery/${rc.scout}/${rc.instance}/manual-job`;
        const listed = (await snapshotsOf(rc.scout, rc.instance, 'manual-job')).map((s) => s.name);
        assert.deepEqual(listed, [manualName], 'the hand-placed file is indexed');
        assert.equal((await get(`${base}/latest`, bearer(token))).status, 200);
        const reply = await get(`${base}/by-fingerprint?fp=${hex64()}`, bearer(token));
        assertError(reply, 404);
        assertError(await get(`${base}/by-fingerprint?fp=0a1b2c3d`, bearer(token)), 404);
      });

      test('verification after the restart reports the missing file; instance delete needs cleanup_missing', async () => {
        const result = (await verify()).body;
        assert.equal(result.status, 'failed');
        assert.deepEqual(failuresOf(result, deleted.name), [
          {
            scout_id: rc.scout,
            scout_instance_id: rc.instance,
            job_name: rc.job,
            filename: deleted.name,
            problem: 'missing',
          },
        ]);
        assert.deepEqual(
          result.failures.filter((f: Failure) => f.problem !== 'missing'),
          [],
          'the copied and formerly unindexed files verify',
        );

        const refused = await admin.delete(`/api/instances/${rc.scout}/${rc.instance}`);
        assert.equal(refused.status, 409, refused.text);
        assert.equal(refused.body.detail?.cleanup_available, true);
        assert.equal(typeof refused.body.detail?.message, 'string');
        assert.ok(existsSync(fileOf(rc.scout, rc.instance, rc.job, kept.name)));

        const cleaned = await admin.delete(`/api/instances/${rc.scout}/${rc.instance}?cleanup_missing=true`);
        assert.equal(cleaned.status, 200, cleaned.text);
        assert.equal(existsSync(fileOf(rc.scout, rc.instance, rc.job, kept.name)), false);
        const inst = await instanceIn(rc.scout, rc.instance);
        assert.deepEqual(inst?.jobs.flatMap((j) => j.snapshots) ?? [], []);
        assert.equal((await verify()).body.status, 'ok');
        // Nothing of the instance is left on disk.
        const left = existsSync(join(root(), rc.scout, rc.instance))
          ? readdirSync(join(root(), rc.scout, rc.instance), { recursive: true })
          : [];
        assert.deepEqual(left, []);
      });
    });
  });
}
