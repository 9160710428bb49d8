// The extended attributes listed a part at a time ahead of the archive (listXattrs in
// src/scout/archive/xattr-scan.ts): the same attributes as one `getfattr -R` over the whole
// folder, a part listed only once an archive nears it, names as exact bytes.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { listXattrs, scanXattrs } from '../../src/scout/archive/xattr-scan.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const work = mkdtempSync(join(tmpdir(), 'backupd-xattr-listing-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** Sets user.<name> on the path given as a byte string (argv from Node is UTF-8: sh gets the bytes from printf). */
function tag(dir: string, path: string, name: string, value: string): void {
  const octal = [...Buffer.from(path, 'latin1')]
    .map((byte) => `\\${byte.toString(8).padStart(3, '0')}`)
    .join('');
  execFileSync('sh', ['-c', `setfattr -n user.${name} -v ${value} "$(printf '${octal}')"`], { cwd: dir });
}

describe('extended attributes listed part by part', {
  skip: skipUnlessPrograms(['getfattr', 'setfattr']),
}, () => {
  const dir = join(work, 'job');
  const odd = 'caf\xe9'; // one byte 0xe9: not UTF-8
  for (const folder of ['a', 'b', 'c', 'd', 'e', 'f', odd])
    mkdirSync(Buffer.from(join(dir, folder), 'latin1'), { recursive: true });
  mkdirSync(join(dir, 'a', 'deep', 'er'), { recursive: true });
  writeFileSync(join(dir, 'a', 'deep', 'er', 'x.txt'), 'x');
  writeFileSync(Buffer.from(join(dir, `${odd}/n\xe9`), 'latin1'), 'odd');
  // More files of the job folder itself than one part holds (4,096).
  for (let i = 0; i < 5000; i += 1) writeFileSync(join(dir, `loose-${String(i).padStart(4, '0')}`), '');
  writeFileSync(join(dir, 'f', 'late.txt'), 'tagged after the listing began');
  tag(dir, 'a/deep/er/x.txt', 'x', 'deep');
  tag(dir, `${odd}/n\xe9`, 'y', 'odd');
  tag(dir, 'loose-0000', 'first', '1');
  tag(dir, 'loose-4999', 'last', '2');
  tag(dir, 'b', 'folder', '3');

  test('the same attributes as one getfattr -R over the folder, asked in any order', async () => {
    const whole = await scanXattrs(dir);
    assert.deepEqual([...whole.keys()].sort(), [
      'a/deep/er/x.txt',
      'b',
      `${odd}/n\xe9`,
      'loose-0000',
      'loose-4999',
    ]);
    const listing = listXattrs(dir);
    for (const path of ['loose-4999', `${odd}/n\xe9`, 'a/deep/er/x.txt', 'b', 'loose-0000'])
      assert.deepEqual(await listing.get(path), whole.get(path), path);
    assert.equal(await listing.get('a/deep'), undefined);
    assert.equal(await listing.get('loose-0001'), undefined);
    assert.equal(await listing.get('not-there/at-all'), undefined);
  });

  test('a part is listed when an archive nears it, not before', async () => {
    const listing = listXattrs(dir);
    assert.equal(await listing.get('a/deep'), undefined); // parts a, b (and c) are listed by now
    tag(dir, 'f/late.txt', 'late', '4'); // f is 6 parts on: not listed yet
    assert.deepEqual(await listing.get('f/late.txt'), [{ name: 'user.late', value: Buffer.from('4') }]);
  });

  test('one helper process lists every part, one after the other', async () => {
    const helpers = () =>
      readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8')
        .split(' ')
        .filter((pid) => pid && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bash');
    const before = helpers().length;
    const listing = listXattrs(dir);
    assert.deepEqual(await listing.get('a/deep/er/x.txt'), [{ name: 'user.x', value: Buffer.from('deep') }]);
    assert.deepEqual(await listing.get('b'), [{ name: 'user.folder', value: Buffer.from('3') }]);
    assert.deepEqual(await listing.get(`${odd}/n\xe9`), [{ name: 'user.y', value: Buffer.from('odd') }]);
    assert.equal(await listing.get('e/nothing-here'), undefined);
    // Parts a to f are listed and the loose names are not all asked yet: the helper waits.
    assert.equal(helpers().length - before, 1);
  });

  test('a helper killed half-way: the parts after it answer without attributes and one warning, not a hang', async () => {
    const warnings: string[] = [];
    const listing = listXattrs(dir, { onWarning: (message) => warnings.push(message) });
    assert.deepEqual(await listing.get('a/deep/er/x.txt'), [{ name: 'user.x', value: Buffer.from('deep') }]);
    const mine = readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').split(' ').filter(Boolean);
    // The newest child is this listing's helper.
    process.kill(Number(mine.at(-1)), 'SIGKILL');
    assert.equal(await listing.get('f/late.txt'), undefined);
    assert.equal(await listing.get('loose-4999'), undefined);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(
      warnings[0] as string,
      /listing stopped \(exit by a signal\) before the whole job was listed/,
    );
  });

  test('a listing left unfinished does not keep the process running', () => {
    const script = `
      const { listXattrs } = await import(${JSON.stringify(new URL('../../src/scout/archive/xattr-scan.ts', import.meta.url).href)});
      const listing = listXattrs(${JSON.stringify(dir)});
      console.log(JSON.stringify(await listing.get('b')));
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.signal, null, 'ended by itself, not by the timeout');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /user\.folder/);
  });

  test('a listing stopped by its signal answers without attributes, not with an error', async () => {
    const stop = new AbortController();
    const listing = listXattrs(dir, { signal: stop.signal });
    stop.abort(new Error('cancelled'));
    assert.equal(await listing.get('b'), undefined);
    assert.equal(await listing.get('loose-4999'), undefined);
  });

  test('no getfattr: no attributes and one warning, not a failure', async () => {
    const warnings: string[] = [];
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const listing = listXattrs(dir, { onWarning: (message) => warnings.push(message) });
      assert.equal(await listing.get('b'), undefined);
      assert.equal(await listing.get('loose-4999'), undefined);
    } finally {
      process.env.PATH = saved;
    }
    assert.deepEqual(warnings, [
      'getfattr is not installed (Debian package "attr"): extended attributes, ACLs and file capabilities are not in this snapshot',
    ]);
  });
});
