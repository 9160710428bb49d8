// Restores end to end: one Station and two Scouts (A and B). A backs up a job and restores it
// through /api/recovery/preview and /api/recovery/restore; the Station admin creates restore
// requests that B (or A) reads, accepts or rejects; requests expire after an hour; the public
// restore hint never restores anything and is rate limited.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseMarker } from '../../src/scout/jobs/marker.ts';
import { jobFingerprint, walkJob } from '../../src/scout/jobs/walk.ts';
import { buildTree, jobTree, type TreeNode } from '../helpers/files.ts';
import { adminClient, type Client, mintAutomationToken } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import {
  backupJob,
  connectScout,
  scoutDataDir,
  scoutStatus,
  startStation,
  waitIdle,
} from '../helpers/scout.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const skip = skipUnlessPrograms(['tar']);

/** The job fingerprint the Scout computes for a folder with an empty marker. */
async function fingerprintOf(dir: string, folderName: string): Promise<string> {
  const parsed = parseMarker('', folderName);
  assert.ok(parsed.config);
  const entries = [];
  for await (const entry of walkJob(dir, parsed.config)) entries.push(entry);
  return jobFingerprint(entries);
}

interface ScoutHandle {
  server: TestServer;
  admin: Client;
  scan: string;
  id: string;
  instance: string;
  credential: string;
  key: string;
  fingerprint: string;
}

let station: TestServer;
let stationAdmin: Client;
let A: ScoutHandle;
let B: ScoutHandle;

async function startScout(id: string, setup: (scan: string) => void, advertise: boolean) {
  const { dataDir, scanRoot: scan } = scoutDataDir(`backupd-restore-${id}-`);
  setup(scan);
  // The env object is kept by the helper, so a restart picks up ADVERTISED_URL set later.
  const env: Record<string, string> = { SCAN_ROOT: scan };
  let server = await startServer('scout', { dataDir, env });
  if (advertise) {
    env.ADVERTISED_URL = server.url;
    server = await server.restart();
  }
  const admin = await adminClient(server.url);
  const credential = await connectScout(admin, stationAdmin, id);
  const status = await scoutStatus(admin);
  const key = await admin.get('/api/encryption-key');
  return {
    server,
    admin,
    scan,
    id,
    instance: status.scout_instance_id,
    credential,
    key: key.body.key_base64 as string,
    fingerprint: key.body.fingerprint as string,
  };
}

const requestPath = (source: ScoutHandle, job: string, file: string) =>
  `/api/snapshots/${source.id}/${source.instance}/${job}/${encodeURIComponent(file)}/restore`;

/** The Station admin asks for A’s `docs` snapshot `file` to be restored on B. */
const requestOnB = (file: string) =>
  stationAdmin.post(requestPath(A, 'docs', file), { target_scout_id: B.id, target_instance_id: B.instance });

interface RequestView {
  id: string;
  status: string;
  filename: string;
  job_name: string;
}

async function requestsOf(handle: ScoutHandle): Promise<RequestView[]> {
  const reply = await handle.admin.get('/api/restore-requests');
  assert.equal(reply.status, 200, reply.text);
  assert.ok(Array.isArray(reply.body), 'GET /api/restore-requests answers an array');
  return reply.body;
}

async function statusOf(handle: ScoutHandle, id: string): Promise<string | undefined> {
  return (await requestsOf(handle)).find((r) => r.id === id)?.status;
}

/** POST /backup/recovery/{scout}/{instance}/requests/{id} on the Station with the Scout's token. */
function stationMove(handle: ScoutHandle, id: string, status: string) {
  return fetch(`${station.url}/backup/recovery/${handle.id}/${handle.instance}/requests/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${handle.credential}`, 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
}

describe('restore end to end', { skip }, () => {
  const docs = () => join(A.scan, 'docs');
  let snap1 = '';
  let snap2 = '';
  let fp1 = '';
  let fp2 = '';
  let tree1: Record<string, TreeNode> = {};
  let tree2: Record<string, TreeNode> = {};

  before(async () => {
    ({ server: station, admin: stationAdmin } = await startStation());
    A = await startScout(
      'scout-a',
      (scan) => {
        const job = buildTree(join(scan, 'docs'), {
          'sub/empty/': null,
          '.upload_dir': '',
          'a.txt': 'v1',
          'sub/b.sh': '#!/bin/sh\necho b\n',
          'sub/c.bin': Buffer.alloc(30_000, 5),
          link: '-> a.txt',
        });
        chmodSync(join(job, 'sub', 'b.sh'), 0o750);
        chmodSync(join(job, 'sub', 'c.bin'), 0o600);
      },
      false,
    );
    B = await startScout(
      'scout-b',
      (scan) => buildTree(scan, { 'own/.upload_dir': '', 'own/mine.txt': 'B keeps this' }),
      true,
    );
    tree1 = jobTree(docs());
    fp1 = await fingerprintOf(docs(), 'docs');
    snap1 = await backupJob(A.admin, 'docs');
    // B backs up too: that binds its Station token and tells the Station its advertised URL.
    await backupJob(B.admin, 'own');
  });

  after(async () => {
    await A?.server.dispose();
    await B?.server.dispose();
    await station?.dispose();
  });

  test('preview lists adds and replaces; restore puts the snapshot back and leaves local-only files', async () => {
    assert.match(snap1, /^docs__\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ__[0-9a-f]{8}(-\d+)?\.tar\.zst$/);
    assert.equal(snap1.split('__')[2]?.slice(0, 8), fp1.slice(0, 8));
    writeFileSync(join(docs(), 'a.txt'), 'edited locally, and longer');
    unlinkSync(join(docs(), 'sub', 'b.sh'));
    writeFileSync(join(docs(), 'local-only.txt'), 'only here');
    const before = jobTree(docs());

    const preview = await A.admin.post('/api/recovery/preview', { relative_path: 'docs' });
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.snapshot, snap1);
    assert.deepEqual(preview.body.add, ['sub/b.sh']);
    // sub/c.bin is as in the snapshot (content, mode, time): unchanged, not replaced.
    assert.deepEqual(preview.body.replace, ['a.txt']);
    assert.deepEqual(preview.body.unchanged, ['sub/c.bin']);
    assert.equal(preview.body.add_count, 1);
    assert.equal(preview.body.replace_count, 1);
    assert.equal(preview.body.unchanged_count, 1);
    assert.equal(preview.body.bytes, 2 + '#!/bin/sh\necho b\n'.length);
    assert.deepEqual(jobTree(docs()), before, 'a preview changes nothing');

    const restored = await A.admin.post('/api/recovery/restore', { relative_path: 'docs' });
    assert.equal(restored.status, 200, restored.text);
    assert.deepEqual(restored.body, {
      status: 'restored',
      snapshot: snap1,
      added: 1,
      replaced: 1,
      unchanged: 1,
      destination: docs(),
      bytes: preview.body.bytes,
      problem_count: 0,
      problems: [],
    });
    const after = jobTree(docs());
    for (const [path, node] of Object.entries(tree1)) {
      assert.deepEqual(after[path], node, `${path} is as in the snapshot`);
    }
    assert.equal(readFileSync(join(docs(), 'local-only.txt'), 'utf8'), 'only here');
    assert.deepEqual(Object.keys(after).sort(), [...Object.keys(tree1), 'local-only.txt'].sort());
    assert.equal((await A.admin.get('/api/status')).body.operation, null);
  });

  test('chosen paths into another folder: only they are written there, the job folder is untouched', async () => {
    const before = jobTree(docs());
    const elsewhere = join(tmpdir(), `backupd-restore-elsewhere-${randomBytes(4).toString('hex')}`);
    try {
      const preview = await A.admin.post('/api/recovery/preview', {
        relative_path: 'docs',
        paths: ['a.txt'],
        destination: elsewhere,
      });
      assert.equal(preview.status, 200, preview.text);
      assert.deepEqual([preview.body.add, preview.body.replace, preview.body.unchanged], [['a.txt'], [], []]);
      assert.equal(existsSync(elsewhere), false, 'a preview makes no folder');

      const one = await A.admin.post('/api/recovery/restore', {
        relative_path: 'docs',
        paths: ['a.txt'],
        destination: elsewhere,
      });
      assert.equal(one.status, 200, one.text);
      assert.equal(one.body.added, 1);
      assert.equal(one.body.destination, elsewhere);
      assert.deepEqual(readdirSync(elsewhere), ['a.txt']);
      assert.equal(readFileSync(join(elsewhere, 'a.txt'), 'utf8'), 'v1');

      // A folder restores its subtree, at its path relative to the job folder.
      const sub = await A.admin.post('/api/recovery/restore', {
        relative_path: 'docs',
        paths: ['sub/', 'not-there.txt'],
        destination: elsewhere,
      });
      assert.equal(sub.status, 200, sub.text);
      assert.equal(sub.body.added, 2);
      assert.deepEqual(sub.body.problems, [{ path: 'not-there.txt', message: 'not in the snapshot' }]);
      assert.deepEqual(readdirSync(join(elsewhere, 'sub')).sort(), ['b.sh', 'c.bin', 'empty']);
      assert.deepEqual(readdirSync(elsewhere).sort(), ['a.txt', 'sub']);
      assert.deepEqual(jobTree(docs()), before, 'the job folder is untouched');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('an identical file is unchanged and not rewritten; same size and time but other bytes is replaced', async () => {
    const a = join(docs(), 'a.txt');
    const c = join(docs(), 'sub', 'c.bin');
    const aBefore = statSync(a);
    writeFileSync(a, 'v2'); // same size; the time put back: only the bytes tell
    utimesSync(a, aBefore.atime, aBefore.mtime);
    const cBefore = statSync(c);
    const preview = await A.admin.post('/api/recovery/preview', { relative_path: 'docs' });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.body.replace, ['a.txt']);
    assert.deepEqual([...preview.body.unchanged].sort(), ['sub/b.sh', 'sub/c.bin']);
    assert.equal(preview.body.unchanged_count, 2);
    const restored = await A.admin.post('/api/recovery/restore', { relative_path: 'docs' });
    assert.equal(restored.status, 200, restored.text);
    assert.equal(restored.body.replaced, 1);
    assert.equal(restored.body.unchanged, 2);
    assert.equal(readFileSync(a, 'utf8'), 'v1');
    const cAfter = statSync(c);
    assert.equal(cAfter.ino, cBefore.ino, 'the unchanged file is the same inode');
    assert.equal(cAfter.ctimeMs, cBefore.ctimeMs, 'and was not touched');
  });

  test('bad paths and destinations are 400 with a detail', async () => {
    const linkDest = join(tmpdir(), `backupd-restore-link-${randomBytes(4).toString('hex')}`);
    symlinkSync(tmpdir(), linkDest);
    try {
      for (const [body, detail] of [
        [{ paths: ['../etc/passwd'] }, /paths "\.\.\/etc\/passwd" has "\.\."/],
        [{ paths: ['/etc/passwd'] }, /is absolute/],
        [{ paths: ['.'] }, /names no file or folder/],
        [{ paths: ['bad\\q'] }, /starts no escape/],
        [{ paths: 'a.txt' }, /paths must be a list/],
        [{ destination: 'relative/dir' }, /absolute folder/],
        [{ destination: '/tmp/../etc' }, /must not contain "\.\."/],
        [{ destination: linkDest }, /symbolic link/],
      ] as const) {
        for (const route of ['preview', 'restore']) {
          const reply = await A.admin.post(`/api/recovery/${route}`, { relative_path: 'docs', ...body });
          assert.equal(reply.status, 400, `${route} ${JSON.stringify(body)}: ${reply.text}`);
          assert.match(reply.body.detail, detail);
        }
      }
    } finally {
      unlinkSync(linkDest);
    }
  });

  test('a folder the restore cannot write into: every other file restored, the problems in the answer', async () => {
    writeFileSync(join(docs(), 'a.txt'), 'edited again');
    const sub = join(docs(), 'sub');
    // Both must be written (files as in the snapshot are not rewritten at all).
    unlinkSync(join(sub, 'b.sh'));
    writeFileSync(join(sub, 'c.bin'), 'changed');
    execFileSync('chattr', ['+i', sub]); // immutable: even root cannot add or replace a file there
    try {
      const restored = await A.admin.post('/api/recovery/restore', { relative_path: 'docs' });
      assert.equal(restored.status, 200, restored.text);
      assert.equal(restored.body.status, 'restored');
      const problems = restored.body.problems as { path: string; message: string }[];
      assert.equal(restored.body.problem_count, problems.length);
      assert.deepEqual(
        problems.filter((p) => p.message.startsWith('not restored')),
        [
          { path: 'sub/b.sh', message: 'not restored: operation not permitted (EPERM)' },
          { path: 'sub/c.bin', message: 'not restored: operation not permitted (EPERM)' },
        ],
      );
      assert.ok(
        problems.every((p) => p.path.startsWith('sub')),
        JSON.stringify(problems),
      );
    } finally {
      execFileSync('chattr', ['-i', sub]);
    }
    assert.equal(readFileSync(join(docs(), 'a.txt'), 'utf8'), 'v1', 'a.txt restored all the same');
    const again = await A.admin.post('/api/recovery/restore', { relative_path: 'docs' });
    assert.equal(again.body.problem_count, 0, again.text);
  });

  test('fingerprint: empty is the latest, 8 or 64 hex the newest match, anything else 400', async () => {
    writeFileSync(join(docs(), 'a.txt'), 'version two');
    tree2 = jobTree(docs());
    fp2 = await fingerprintOf(docs(), 'docs');
    snap2 = await backupJob(A.admin, 'docs');
    assert.notEqual(snap2, snap1);
    assert.notEqual(fp2, fp1);

    const latest = await A.admin.post('/api/recovery/preview', { relative_path: 'docs', fingerprint: '' });
    assert.equal(latest.status, 200, latest.text);
    assert.equal(latest.body.snapshot, snap2);
    const omitted = await A.admin.post('/api/recovery/preview', { relative_path: 'docs' });
    assert.equal(omitted.body.snapshot, snap2);
    const short = await A.admin.post('/api/recovery/preview', {
      relative_path: 'docs',
      fingerprint: fp1.slice(0, 8),
    });
    assert.equal(short.status, 200, short.text);
    assert.equal(short.body.snapshot, snap1);

    const old = await A.admin.post('/api/recovery/restore', { relative_path: 'docs', fingerprint: fp1 });
    assert.equal(old.status, 200, old.text);
    assert.equal(old.body.status, 'restored');
    assert.equal(old.body.snapshot, snap1);
    assert.equal(readFileSync(join(docs(), 'a.txt'), 'utf8'), 'v1');

    const back = await A.admin.post('/api/recovery/restore', { relative_path: 'docs', fingerprint: '' });
    assert.equal(back.body.snapshot, snap2);
    assert.equal(readFileSync(join(docs(), 'a.txt'), 'utf8'), 'version two');
    assert.deepEqual(jobTree(docs()), tree2);

    for (const bad of [
      'XYZ',
      fp1.slice(0, 8).toUpperCase(),
      fp1.slice(0, 7),
      fp1.slice(0, 9),
      'g'.repeat(8),
    ]) {
      if (bad === fp1.slice(0, 8)) continue;
      for (const route of ['preview', 'restore']) {
        const reply = await A.admin.post(`/api/recovery/${route}`, {
          relative_path: 'docs',
          fingerprint: bad,
        });
        assert.equal(reply.status, 400, `${route} fingerprint ${bad}: ${reply.text}`);
        assert.equal(typeof reply.body.detail, 'string');
      }
    }
    const unknown = fp1.startsWith('deadbeef') ? 'cafebabe' : 'deadbeef';
    const none = await A.admin.post('/api/recovery/restore', { relative_path: 'docs', fingerprint: unknown });
    assert.equal(none.status, 404, none.text);
    const noJob = await A.admin.post('/api/recovery/preview', { relative_path: 'nothing-here' });
    assert.ok([400, 404].includes(noJob.status), noJob.text);
    assert.deepEqual(jobTree(docs()), tree2, 'refused restores change nothing');
  });

  test('while another operation runs, restore answers already_running and restores nothing', async () => {
    const big = join(A.scan, 'big');
    mkdirSync(big);
    writeFileSync(join(big, '.upload_dir'), '');
    writeFileSync(join(big, 'noise.bin'), randomBytes(24 * 1024 * 1024));
    writeFileSync(join(docs(), 'a.txt'), 'changed while busy');
    const forced = await A.admin.post('/api/directories/force-send', { relative_path: 'big' });
    assert.equal(forced.body.status, 'queued', forced.text);
    const busy = await A.admin.post('/api/recovery/restore', { relative_path: 'docs' });
    const stillBusy = (await A.admin.get('/api/status')).body.operation;
    assert.equal(busy.status, 200, busy.text);
    if (busy.body.status !== 'already_running') {
      assert.equal(stillBusy, null, 'restore ran only because the forced upload had already ended');
    } else {
      assert.deepEqual(busy.body, { status: 'already_running' });
      assert.equal(readFileSync(join(docs(), 'a.txt'), 'utf8'), 'changed while busy');
    }
    await waitIdle(A.admin);
    writeFileSync(join(docs(), 'a.txt'), 'version two');
    rmSync(big, { recursive: true, force: true });
  });

  describe('restore requests', () => {
    test('a request for A’s snapshot on B: pending, listed on B, accepted with A’s key, completed', async () => {
      const created = await requestOnB(snap2);
      assert.equal(created.status, 201, created.text);
      const request = created.body.request;
      assert.equal(request.status, 'pending');
      assert.equal(request.job_name, 'docs');
      assert.equal(request.filename, snap2);
      assert.equal(request.source_scout_id, A.id);
      assert.equal(request.source_instance_id, A.instance);
      assert.equal(request.target_scout_id, B.id);
      assert.equal(request.target_instance_id, B.instance);
      assert.equal(typeof request.id, 'string');
      assert.ok(!Number.isNaN(Date.parse(request.created_at)));
      assert.equal(created.body.notified, true, 'B advertised its URL, so the hint reached it');

      const listed = (await requestsOf(B)).find((r) => r.id === request.id);
      assert.equal(listed?.status, 'pending');
      assert.equal(listed?.filename, snap2);
      assert.equal((await statusOf(A, request.id)) ?? null, null, 'A does not see B’s request');

      // The public hint is only a hint: B re-reads its list and restores nothing.
      const before = jobTree(B.scan);
      const hint = await fetch(`${B.server.url}/backup/restore-notifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: request.id }),
      });
      assert.equal(hint.status, 200, await hint.text());
      assert.deepEqual(jobTree(B.scan), before);
      assert.equal(await statusOf(B, request.id), 'pending');

      const decided = await B.admin.post('/api/restore-requests/decision', {
        id: request.id,
        decision: 'accept',
        relative_path: 'restored-from-a',
        encryption_key: A.key,
      });
      assert.equal(decided.status, 200, decided.text);
      assert.equal(decided.body.status, 'restored');
      assert.equal(decided.body.snapshot, snap2);
      const into = join(B.scan, 'restored-from-a');
      assert.deepEqual(jobTree(into), tree2, 'A’s files are under B’s scan root');
      assert.equal(readFileSync(join(B.scan, 'own', 'mine.txt'), 'utf8'), 'B keeps this');
      assert.equal(await statusOf(B, request.id), 'completed');
      // The Station's own list (the dashboard's) shows it completed, newest first.
      const onStation = await stationAdmin.get('/api/restore-requests');
      assert.equal(onStation.status, 200, onStation.text);
      assert.equal(onStation.body.requests[0]?.id, request.id);
      assert.equal(onStation.body.requests[0]?.status, 'completed');
      const key = await B.admin.get('/api/encryption-key');
      assert.equal(key.body.fingerprint, B.fingerprint, 'the given key does not replace B’s own');

      // completed → accepted is not a move; completed → completed is a no-op.
      const bad = await stationMove(B, request.id, 'accepted');
      assert.equal(bad.status, 409, await bad.text());
      const same = await stationMove(B, request.id, 'completed');
      assert.equal(same.status, 200, await same.text());
      const again = await B.admin.post('/api/restore-requests/decision', {
        id: request.id,
        decision: 'reject',
      });
      assert.equal(again.status, 409, again.text);
      assert.equal(await statusOf(B, request.id), 'completed');
      // A’s Station token is not bound to B.
      const foreign = await fetch(
        `${station.url}/backup/recovery/${B.id}/${B.instance}/requests/${request.id}`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${A.credential}`, 'content-type': 'application/json' },
          body: JSON.stringify({ status: 'rejected' }),
        },
      );
      assert.equal(foreign.status, 403, await foreign.text());
    });

    test('accepting without the source key fails with a clear error and the request reads rejected', async () => {
      const created = await requestOnB(snap1);
      assert.equal(created.status, 201, created.text);
      const id = created.body.request.id;
      const decided = await B.admin.post('/api/restore-requests/decision', {
        id,
        decision: 'accept',
        relative_path: 'without-key',
      });
      assert.ok(decided.status >= 400, decided.text);
      assert.match(decided.body.detail, /key/i);
      assert.equal(await statusOf(B, id), 'rejected');
      const leftovers = existsSync(join(B.scan, 'without-key')) ? jobTree(join(B.scan, 'without-key')) : {};
      assert.deepEqual(
        Object.values(leftovers).filter((n) => n.type === 'file'),
        [],
        'no files restored',
      );
    });

    test('a request B rejects reads rejected and can no longer be accepted', async () => {
      const created = await requestOnB(snap2);
      assert.equal(created.status, 201, created.text);
      const id = created.body.request.id;
      const rejected = await B.admin.post('/api/restore-requests/decision', { id, decision: 'reject' });
      assert.equal(rejected.status, 200, rejected.text);
      assert.equal(rejected.body.status, 'rejected');
      assert.equal(await statusOf(B, id), 'rejected');
      const late = await B.admin.post('/api/restore-requests/decision', {
        id,
        decision: 'accept',
        relative_path: 'too-late',
        encryption_key: A.key,
      });
      assert.equal(late.status, 409, late.text);
      assert.ok(!existsSync(join(B.scan, 'too-late')), 'nothing restored');
      assert.equal(await statusOf(B, id), 'rejected');
    });

    test('decision input: unknown id 404, bad relative_path 400', async () => {
      const unknown = await B.admin.post('/api/restore-requests/decision', {
        id: 'no-such-request',
        decision: 'reject',
      });
      assert.equal(unknown.status, 404, unknown.text);
      const created = await requestOnB(snap2);
      const id = created.body.request.id;
      for (const relative_path of ['a/b', '../up', '..', '.hidden', '/abs']) {
        const reply = await B.admin.post('/api/restore-requests/decision', {
          id,
          decision: 'accept',
          relative_path,
          encryption_key: A.key,
        });
        assert.equal(reply.status, 400, `${relative_path}: ${reply.text}`);
      }
      const badKey = await B.admin.post('/api/restore-requests/decision', {
        id,
        decision: 'accept',
        relative_path: 'x',
        encryption_key: 'not-a-key',
      });
      assert.equal(badKey.status, 400, badKey.text);
      assert.equal(await statusOf(B, id), 'pending', 'refused input leaves the request pending');
      const reject = await B.admin.post('/api/restore-requests/decision', { id, decision: 'reject' });
      assert.equal(reject.status, 200);
    });

    test('an empty body targets the original instance; the relative_path defaults to the job name', async () => {
      const created = await stationAdmin.post(requestPath(A, 'docs', snap1), {});
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.request.target_scout_id, A.id);
      assert.equal(created.body.request.target_instance_id, A.instance);
      assert.equal(created.body.notified, false, 'A advertised no URL');
      const id = created.body.request.id;
      assert.equal(await statusOf(A, id), 'pending');
      writeFileSync(join(docs(), 'local-only.txt'), 'still here');
      const decided = await A.admin.post('/api/restore-requests/decision', { id, decision: 'accept' });
      assert.equal(decided.status, 200, decided.text);
      assert.equal(decided.body.status, 'restored');
      assert.equal(readFileSync(join(docs(), 'a.txt'), 'utf8'), 'v1', 'snapshot 1 restored into docs');
      assert.equal(readFileSync(join(docs(), 'local-only.txt'), 'utf8'), 'still here');
      assert.equal(await statusOf(A, id), 'completed');
      writeFileSync(join(docs(), 'a.txt'), 'version two');
    });

    test('creation rules: bound target, both target fields, known snapshot, restore scope', async () => {
      const ghost = await stationAdmin.post(requestPath(A, 'docs', snap2), {
        target_scout_id: 'ghost',
        target_instance_id: '0123456789abcdef',
      });
      assert.equal(ghost.status, 409, ghost.text);
      const onlyScout = await stationAdmin.post(requestPath(A, 'docs', snap2), { target_scout_id: B.id });
      assert.equal(onlyScout.status, 400, onlyScout.text);
      const onlyInstance = await stationAdmin.post(requestPath(A, 'docs', snap2), {
        target_instance_id: B.instance,
      });
      assert.equal(onlyInstance.status, 400, onlyInstance.text);
      const missing = await stationAdmin.post(
        requestPath(A, 'docs', 'docs__2020-01-01T00-00-00Z__00000000.tar.zst'),
        {},
      );
      assert.equal(missing.status, 404, missing.text);

      const read = await mintAutomationToken(stationAdmin, ['read']);
      const restore = await mintAutomationToken(stationAdmin, ['restore']);
      const body = { target_scout_id: B.id, target_instance_id: B.instance };
      const forbidden = await fetch(`${station.url}${requestPath(A, 'docs', snap2)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${read}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(forbidden.status, 403, await forbidden.text());
      const allowed = await fetch(`${station.url}${requestPath(A, 'docs', snap2)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${restore}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(allowed.status, 201, await allowed.clone().text());
      const made = (await allowed.json()) as { request: RequestView };
      assert.equal(made.request.status, 'pending');
      assert.equal(await statusOf(B, made.request.id), 'pending');
    });

    test('after an hour a request reads expired and every later decision is 409', async () => {
      const created = await requestOnB(snap2);
      assert.equal(created.status, 201, created.text);
      const id = created.body.request.id;
      const accepted = await stationMove(B, id, 'accepted');
      const acceptedId = id;
      assert.equal(accepted.status, 200, await accepted.text());
      const pending = await requestOnB(snap2);
      const pendingId = pending.body.request.id;
      const completed = (await requestsOf(B)).filter((r) => r.status === 'completed').map((r) => r.id);
      assert.ok(completed.length >= 1);

      station.advanceClock(61 * 60 * 1000);

      assert.equal(await statusOf(B, pendingId), 'expired');
      assert.equal(await statusOf(B, acceptedId), 'expired');
      for (const done of completed) assert.equal(await statusOf(B, done), 'completed', 'final states stay');
      for (const decision of ['accept', 'reject']) {
        const late = await B.admin.post('/api/restore-requests/decision', {
          id: pendingId,
          decision,
          relative_path: 'expired-restore',
          encryption_key: A.key,
        });
        assert.equal(late.status, 409, `${decision}: ${late.text}`);
      }
      assert.ok(!existsSync(join(B.scan, 'expired-restore')));
      const move = await stationMove(B, pendingId, 'accepted');
      assert.equal(move.status, 409, await move.text());
      const complete = await stationMove(B, acceptedId, 'completed');
      assert.equal(complete.status, 409, await complete.text());
      const download = await fetch(
        `${station.url}/backup/recovery/${B.id}/${B.instance}/requests/${acceptedId}/archive`,
        { headers: { authorization: `Bearer ${B.credential}` } },
      );
      assert.equal(download.status, 409, 'an expired request’s archive is not handed out');
      await download.body?.cancel();
    });
  });

  test('the public restore hint needs no sign-in, restores nothing, and allows 30 a minute', async () => {
    const before = jobTree(A.scan);
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 31; i += 1) {
      const res = await fetch(`${A.server.url}/backup/restore-notifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: `hint-${i}` }),
      });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
      else await res.body?.cancel();
    }
    assert.deepEqual(statuses.slice(0, 30), Array(30).fill(200));
    assert.equal(statuses[30], 429);
    const retry = Number(limited?.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry > 0 && retry <= 60, `Retry-After ${retry}`);
    assert.deepEqual(jobTree(A.scan), before, 'hints restore nothing');
    assert.equal((await A.admin.get('/api/status')).body.operation, null);
  });
});
