// Every file comes back (issue 24, the restore side): archives made by GNU tar
// (`--format=pax --xattrs --acls`, as the Scout writes them) restore names as exact bytes
// (255 bytes, Latin-1), hard links as one inode, zero runs as holes, xattrs, ACLs and
// capabilities; an entry the destination refuses is a problem of that entry, never the end.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { type RestoreOptions, restoreArchive } from '../../src/scout/restore/restorer.ts';
import { archiveWithTools } from '../helpers/archives.ts';
import { scratch } from '../helpers/files.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const skip = skipUnlessPrograms([
  'age',
  'zstd',
  'tar',
  'setfattr',
  'getfattr',
  'setfacl',
  'getfacl',
  'setcap',
  'getcap',
  'chattr',
]);
const { work, fresh } = scratch('backupd-fidelity-');
const key = generateScoutKey();
const T = 1_600_000_000;
const XATTR_TAR = ['--xattrs', '--xattrs-include=*', '--acls'];

const toolArchive = (cwd: string, args: string[]) => archiveWithTools(cwd, args, key.ageRecipient);
const restore = (archive: Buffer, dest: string, extra: Partial<RestoreOptions> = {}) =>
  restoreArchive({ source: Readable.from([archive]), keys: [key], dest, ...extra });
const names = (dir: string) =>
  readdirSync(dir, { encoding: 'buffer' })
    .map((n) => n.toString('hex'))
    .sort();
const run = (program: string, args: string[]) => execFileSync(program, args, { encoding: 'utf8' });
/** An attribute listing without its "# file:" line, so two files compare. */
const attrs = (path: string) =>
  run('getfattr', ['-h', '-d', '-m', '-', '-e', 'hex', path]).replace(/^# file: .*\n/m, '');
const acl = (path: string) => run('getfacl', ['-p', '-n', path]).replace(/^# file: .*\n/m, '');

describe('restore fidelity', { skip }, () => {
  after(() => {
    execFileSync('chattr', ['-R', '-i', work], { stdio: 'ignore' });
    rmSync(work, { recursive: true, force: true });
  });

  test('a 255-byte name and a Latin-1 name come back as their exact bytes; shown escaped', async () => {
    const src = fresh('src');
    const long = `${'L'.repeat(251)}.dat`;
    const latin1 = Buffer.from('latin1-caf\xe9.txt', 'latin1');
    writeFileSync(join(src, long), 'long');
    mkdirSync(Buffer.concat([Buffer.from(`${src}/`), Buffer.from('dir-\xff', 'latin1')]));
    writeFileSync(Buffer.concat([Buffer.from(`${src}/`), latin1]), 'cafe');
    const archive = toolArchive(src, ['.']);
    const preview = await restore(archive, fresh('dry'), { dryRun: true });
    assert.deepEqual(preview.add.sort(), [long, 'latin1-caf\\xe9.txt'].sort());
    const dest = fresh('dest');
    const plan = await restore(archive, dest);
    assert.deepEqual(plan.problems, []);
    assert.equal(Buffer.byteLength(long), 255);
    assert.deepEqual(names(dest), names(src));
    assert.equal(readFileSync(join(dest, long), 'utf8'), 'long');
    assert.equal(readFileSync(Buffer.concat([Buffer.from(`${dest}/`), latin1])).toString(), 'cafe');
  });

  test('hard links come back as one inode; a link to a file the restore did not write is a problem', async () => {
    const src = fresh('src');
    mkdirSync(join(src, 'sub'));
    writeFileSync(join(src, 'f'), 'shared');
    linkSync(join(src, 'f'), join(src, 'g'));
    linkSync(join(src, 'f'), join(src, 'sub', 'h'));
    const dest = fresh('dest');
    const plan = await restore(toolArchive(src, ['f', 'g', 'sub']), dest);
    assert.deepEqual(plan.problems, []);
    const inode = statSync(join(dest, 'f')).ino;
    assert.equal(statSync(join(dest, 'g')).ino, inode);
    assert.equal(statSync(join(dest, 'sub', 'h')).ino, inode);
    assert.equal(statSync(join(dest, 'f')).nlink, 3);

    // f is stored as "other" (r: regular names only), so g's link entry names an f the archive lacks.
    const archive = toolArchive(src, ['--transform=flags=r;s,^f$,other,', 'f', 'g']);
    const local = fresh('dest');
    writeFileSync(join(local, 'f'), 'pre-existing');
    const refused = await restore(archive, local);
    assert.equal(refused.problemCount, 1);
    assert.deepEqual(refused.problems[0], {
      path: 'g',
      message: 'not restored: hard link to "f", which is not a file this restore wrote',
    });
    assert.equal(statSync(join(local, 'f')).nlink, 1, 'the pre-existing file got no second name');
    assert.equal(readFileSync(join(local, 'other'), 'utf8'), 'shared');
  });

  test('a 64 MiB file holding one 4 KiB block restores to a few blocks, byte-identical', async () => {
    const src = fresh('src');
    const path = join(src, 'disk.img');
    const fd = openSync(path, 'w');
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 32 * 1024 * 1024);
    closeSync(fd);
    execFileSync('truncate', ['-s', '64M', path]);
    writeFileSync(join(src, 'small-zeros'), Buffer.alloc(10_000));
    utimesSync(path, T, T);
    const dest = fresh('dest');
    const plan = await restore(toolArchive(src, ['disk.img', 'small-zeros']), dest);
    assert.deepEqual(plan.problems, []);
    const restored = statSync(join(dest, 'disk.img'));
    assert.equal(restored.size, 64 * 1024 * 1024);
    assert.ok(restored.blocks <= 64, `${restored.blocks} blocks of 512 bytes (one 4 KiB block is 8)`);
    assert.equal(restored.mtimeMs, T * 1000);
    const digest = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
    assert.equal(digest(join(dest, 'disk.img')), digest(path));
    assert.deepEqual(readFileSync(join(dest, 'small-zeros')), Buffer.alloc(10_000));
  });

  test('xattrs, ACLs and capabilities come back as root; user.* only otherwise; mtimes stay', async () => {
    const src = fresh('src');
    const file = join(src, 'f');
    writeFileSync(file, 'data');
    execFileSync('setfattr', ['-n', 'user.plain', '-v', 'value', file]);
    execFileSync('setfattr', ['-n', 'user.odd=name%x', '-v', '0x00ff0a', file]);
    execFileSync('setfacl', ['-m', 'u:1234:rw,g:99:r', file]);
    mkdirSync(join(src, 'd'));
    execFileSync('setfacl', ['-d', '-m', 'u:4321:rx', join(src, 'd')]);
    execFileSync('setfattr', ['-n', 'user.folder', '-v', 'yes', join(src, 'd')]);
    const tool = join(src, 'ping');
    writeFileSync(tool, '#!/bin/sh\n', { mode: 0o755 });
    execFileSync('setcap', ['cap_net_raw+ep', tool]);
    const readOnly = join(src, 'ro');
    writeFileSync(readOnly, 'ro');
    execFileSync('setfattr', ['-n', 'user.ro', '-v', 'kept', readOnly]);
    execFileSync('chmod', ['0444', readOnly]);
    for (const p of [file, tool, readOnly, join(src, 'd')]) utimesSync(p, T, T);
    const archive = toolArchive(src, [...XATTR_TAR, 'f', 'd', 'ping', 'ro']);

    const dest = fresh('dest');
    const plan = await restore(archive, dest, { asRoot: true });
    assert.deepEqual(plan.problems, []);
    for (const name of ['f', 'd', 'ping', 'ro']) {
      assert.equal(attrs(join(dest, name)), attrs(join(src, name)), name);
      assert.equal(acl(join(dest, name)), acl(join(src, name)), name);
      assert.equal(statSync(join(dest, name)).mtimeMs, T * 1000, `${name} keeps its mtime`);
      assert.equal(statSync(join(dest, name)).mode, statSync(join(src, name)).mode, `${name} keeps its mode`);
    }
    assert.match(run('getcap', [join(dest, 'ping')]), /cap_net_raw=ep/);

    const user = fresh('dest');
    const asUser = await restore(archive, user, { asRoot: false });
    assert.deepEqual(asUser.problems, []);
    assert.match(attrs(join(user, 'f')), /user\.plain/);
    assert.doesNotMatch(attrs(join(user, 'f')), /posix_acl/);
    assert.equal(run('getcap', [join(user, 'ping')]).trim(), '');
    assert.match(
      attrs(join(user, 'ro')),
      /user\.ro/,
      'a read-only file takes its attributes before its mode',
    );
  });

  test('entries the destination refuses are problems; every other entry restores', async () => {
    const src = fresh('src');
    mkdirSync(join(src, 'locked'));
    writeFileSync(join(src, 'locked', 'x.txt'), 'x');
    writeFileSync(join(src, 'a.txt'), 'a');
    writeFileSync(join(src, 'n.txt'), 'n');
    writeFileSync(join(src, 'z.txt'), 'z');
    // A name of 300 bytes: tar stores it, no Linux file system takes it.
    const archive = toolArchive(src, [
      `--transform=s,^n.txt$,${'N'.repeat(300)},`,
      'a.txt',
      'locked/x.txt',
      'n.txt',
      'z.txt',
    ]);
    const dest = fresh('dest');
    mkdirSync(join(dest, 'locked'));
    execFileSync('chattr', ['+i', join(dest, 'locked')]); // immutable: even root cannot add a file
    const seen: string[] = [];
    const plan = await restore(archive, dest, { onProblem: ({ path }) => seen.push(path) });
    execFileSync('chattr', ['-i', join(dest, 'locked')]);
    assert.equal(plan.problemCount, 2);
    assert.deepEqual(seen, ['locked/x.txt', 'N'.repeat(300)]);
    assert.match(plan.problems[0]?.message ?? '', /^not restored: operation not permitted \(EPERM\)$/);
    assert.match(plan.problems[1]?.message ?? '', /^not restored: name too long \(ENAMETOOLONG\)$/);
    assert.deepEqual(readdirSync(dest).sort(), ['a.txt', 'locked', 'z.txt']);
    assert.equal(readFileSync(join(dest, 'z.txt'), 'utf8'), 'z');
    assert.deepEqual(readdirSync(join(dest, 'locked')), []);
    assert.deepEqual(plan.add.sort(), ['a.txt', 'z.txt']);
    assert.ok(lstatSync(join(dest, 'locked')).isDirectory());
  });
});
