// Every file comes back (issue 24, done-when): a job folder with the entries real hosts have is
// backed up by a real Scout through a real Station, then restored three ways — the programs
// alone (`age -d | zstd -d | tar --xattrs -x`), `backupd scout restore`, and the Scout's own
// restore — and each gives back byte-exact names, contents, types, modes, owners, mtimes, link
// targets, hard-link structure, extended attributes, ACLs and capabilities (getfattr, getcap);
// backupd's restores keep the holes of a sparse file too.
// FIFOs and sockets are left out and reported in the job's last_skipped.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ByteTreeNode, byteTree } from '../helpers/byte-tree.ts';
import type { Client } from '../helpers/http.ts';
import { IN_CI, skipUnlessPrograms } from '../helpers/programs.ts';
import {
  backupJob,
  connectScout,
  jobState,
  scoutStatus,
  startScout,
  startStation,
} from '../helpers/scout.ts';
import { runBackupd, type TestServer } from '../helpers/server.ts';

const skip =
  skipUnlessPrograms([
    'age',
    'zstd',
    'tar',
    'mkfifo',
    'truncate',
    'setfattr',
    'getfattr',
    'setfacl',
    'setcap',
    'getcap',
  ]) || (process.getuid?.() !== 0 && !IN_CI ? 'owners and a uid of 3,000,000 need root' : false);
const JOB = 'every';
const MiB = 1024 * 1024;

/** A path under `root` with raw bytes in it. */
const raw = (root: string, ...parts: Array<string | number[]>) =>
  Buffer.concat([
    Buffer.from(`${root}/`),
    ...parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))),
  ]);

/** The job folder: every class of entry the issue lists. */
function fillJob(job: string): void {
  mkdirSync(job, { recursive: true });
  writeFileSync(join(job, '.upload_dir'), '');
  writeFileSync(join(job, 'with spaces.txt'), 'spaces');
  writeFileSync(join(job, 'new\nline.txt'), 'newline');
  writeFileSync(join(job, 'back\\slash.txt'), 'backslash');
  writeFileSync(join(job, 'caf\u00e9-nfc.txt'), 'nfc');
  writeFileSync(join(job, 'cafe\u0301-nfd.txt'), 'nfd');
  writeFileSync(join(job, `${'L'.repeat(251)}.dat`), 'a 255-byte name');
  writeFileSync(raw(job, 'latin1-caf', [0xe9], '.txt'), 'latin1');
  mkdirSync(raw(job, 'dir-', [0xff]));
  writeFileSync(raw(job, 'dir-', [0xff], '/inside.txt'), 'in a non-UTF-8 folder');
  const deep = join(job, ...Array.from({ length: 6 }, (_, i) => `${String(i).repeat(99)}`));
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, 'deep.txt'), 'a path over 600 bytes');
  mkdirSync(join(job, 'sticky'));
  execFileSync('chmod', ['1777', join(job, 'sticky')]);
  writeFileSync(join(job, 'setuid'), '#!/bin/sh\n', { mode: 0o755 });
  execFileSync('chmod', ['4755', join(job, 'setuid')]);
  writeFileSync(join(job, 'big-owner'), 'owner');
  execFileSync('chown', ['3000000:3000001', join(job, 'big-owner')]);
  writeFileSync(join(job, 'old'), '1970');
  utimesSync(join(job, 'old'), 1, 1);
  writeFileSync(join(job, 'future'), '2100');
  utimesSync(join(job, 'future'), 4_102_444_800, 4_102_444_800);
  symlinkSync('with spaces.txt', join(job, 'relative-link'));
  symlinkSync('/etc/hostname', join(job, 'absolute-link'));
  symlinkSync('nowhere', join(job, 'dangling-link'));
  symlinkSync(raw('.', 'latin1-caf', [0xe9], '.txt').subarray(2), join(job, 'latin1-link'));
  writeFileSync(join(job, 'hard-a'), 'one inode, three names');
  linkSync(join(job, 'hard-a'), join(job, 'hard-b'));
  mkdirSync(join(job, 'hard-dir'));
  linkSync(join(job, 'hard-a'), join(job, 'hard-dir', 'hard-c'));
  const disk = join(job, 'disk.img');
  const fd = openSync(disk, 'w');
  writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 32 * MiB);
  closeSync(fd);
  execFileSync('truncate', ['-s', '64M', disk]);
  const attrs = join(job, 'attrs.txt');
  writeFileSync(attrs, 'extended attributes and an ACL');
  execFileSync('setfattr', ['-n', 'user.comment', '-v', 'kept', attrs]);
  execFileSync('setfattr', ['-n', 'user.odd=name%', '-v', '0x00ff0a', attrs]);
  execFileSync('setfacl', ['-m', 'u:1234:rw,g:99:r', attrs]);
  mkdirSync(join(job, 'acl-dir'));
  execFileSync('setfacl', ['-d', '-m', 'u:4321:rx', join(job, 'acl-dir')]);
  const ping = join(job, 'ping');
  writeFileSync(ping, '#!/bin/sh\n', { mode: 0o755 });
  execFileSync('setcap', ['cap_net_raw+ep', ping]);
  execFileSync('mkfifo', [join(job, 'fifo')]);
  execFileSync(process.execPath, [
    '-e',
    `require('net').createServer().listen(${JSON.stringify(join(job, 'socket'))}, () => process.exit(0))`,
  ]);
}

/** What a restore must give back: the job folder without its marker and the special files. */
function expected(job: string): Record<string, ByteTreeNode> {
  const tree = byteTree(job);
  for (const left of ['.upload_dir', 'fifo', 'socket']) delete tree[left];
  return tree;
}

function restoredTree(dest: string): Record<string, ByteTreeNode> {
  const tree = byteTree(dest);
  delete tree['.upload_dir'];
  return tree;
}

/** Every extended attribute (user.*, ACLs, capabilities) under `dir`, as getfattr dumps them, by path. */
const attributes = (dir: string) =>
  execFileSync('getfattr', ['-R', '-P', '-h', '-d', '-m', '-', '-e', 'hex', '.'], {
    cwd: dir,
    encoding: 'utf8',
  })
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .sort()
    .join('\n\n');

/** What getcap says of the restored tool. */
const capability = (dir: string) =>
  execFileSync('getcap', [join(dir, 'ping')], { encoding: 'utf8' })
    .replace(dir, '')
    .trim();

/** 512-byte blocks the sparse file takes. */
const blocksOf = (dir: string) => statSync(join(dir, 'disk.img')).blocks;

describe('every file comes back, three ways', { skip }, () => {
  let station: TestServer;
  let scout: TestServer;
  let scoutAdmin: Client;
  let scanRoot: string;
  let want: Record<string, ByteTreeNode>;
  let wantAttributes: string;
  let archive: string;
  let keyFile: string;
  const work = mkdtempSync(join(tmpdir(), 'backupd-fidelity-e2e-'));

  before(async () => {
    const stationStarted = await startStation();
    station = stationStarted.server;
    ({
      server: scout,
      admin: scoutAdmin,
      scanRoot,
    } = await startScout({
      fill: (scan) => fillJob(join(scan, JOB)),
    }));
    const credential = await connectScout(scoutAdmin, stationStarted.admin, 'fidelity-host');
    want = expected(join(scanRoot, JOB));
    wantAttributes = attributes(join(scanRoot, JOB));
    for (const name of [
      'user.comment',
      'system.posix_acl_access',
      'system.posix_acl_default',
      'security.capability',
    ])
      assert.ok(wantAttributes.includes(`${name}=`), `the source has ${name}`);
    await backupJob(scoutAdmin, JOB);
    const status = await scoutStatus(scoutAdmin);
    const key = await scoutAdmin.get('/api/encryption-key');
    keyFile = join(work, 'key.txt');
    writeFileSync(keyFile, `${key.body.age_identity}\n`, { mode: 0o600 });
    const res = await fetch(
      `${station.url}/backup/recovery/${status.scout_id}/${status.scout_instance_id}/${JOB}/latest`,
      { headers: { authorization: `Bearer ${credential}` } },
    );
    assert.equal(res.status, 200);
    archive = join(work, 'snapshot.tar.zst');
    writeFileSync(archive, Buffer.from(await res.arrayBuffer()));
  });

  after(async () => {
    await scout?.dispose();
    await station?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('the FIFO and the socket are left out and reported as skipped', async () => {
    const state = await jobState(scoutAdmin, JOB);
    assert.equal(state.last_status, 'uploaded');
    assert.deepEqual([...(state.last_skipped?.paths ?? [])].sort(), ['fifo', 'socket']);
  });

  test('age -d | zstd -d | tar -x gives back every name, content, mode, owner, mtime, link, inode, xattr, ACL and capability', () => {
    const dest = join(work, 'tar');
    mkdirSync(dest);
    execFileSync(
      'sh',
      [
        '-c',
        `age -d -i "$0" "$1" | zstd -d -q | tar --xattrs --xattrs-include='*' -xpf - -C "$2"`,
        keyFile,
        archive,
        dest,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    assert.deepEqual(restoredTree(dest), want);
    assert.equal(attributes(dest), wantAttributes);
    assert.equal(capability(dest), '/ping cap_net_raw=ep');
  });

  test('backupd scout restore gives back the same (xattrs, ACLs, capability too), and the sparse file keeps its holes', async () => {
    const dest = join(work, 'cli');
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dest, '--archive', archive, '--key-file', keyFile],
      { env: { STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: '' } },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(restoredTree(dest), want);
    assert.equal(attributes(dest), wantAttributes);
    assert.equal(capability(dest), '/ping cap_net_raw=ep');
    assert.ok(blocksOf(dest) <= 64, `disk.img takes ${blocksOf(dest)} blocks of 512 bytes`);
  });

  test("the Scout's own restore gives back the same into the emptied job folder: xattrs, ACLs, capability, holes", async () => {
    const job = join(scanRoot, JOB);
    for (const name of readdirSync(job, { encoding: 'buffer' })) {
      if (name.toString() !== '.upload_dir')
        rmSync(Buffer.concat([Buffer.from(`${job}/`), name]), { recursive: true });
    }
    const reply = await scoutAdmin.post('/api/recovery/restore', { relative_path: JOB });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.problem_count, 0, JSON.stringify(reply.body.problems));
    assert.deepEqual(restoredTree(job), want);
    assert.equal(attributes(job), wantAttributes);
    assert.equal(capability(job), '/ping cap_net_raw=ep');
    assert.ok(blocksOf(job) <= 64, `disk.img takes ${blocksOf(job)} blocks of 512 bytes`);
  });
});
