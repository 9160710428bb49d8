// The fingerprint computed while the walk streams (src/scout/jobs/walk-fingerprints.ts) is
// byte-identical to jobFingerprint over the walked list (src/scout/jobs/fingerprint.ts, the
// one stored fingerprints and drills use), on trees whose names make the two orders differ:
// a folder and its siblings that extend its name with a byte below '/' ("a", "a.txt", "a-b/",
// "a b"), chains of them deeper than the hash branches kept at once, empty folders among them,
// names that are not UTF-8, long names, excluded entries — and when the archive leaves entries
// out or archives them incomplete.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { byteString, bytesOf } from '../../src/scout/jobs/byte-order.ts';
import type { JobConfig } from '../../src/scout/jobs/marker.ts';
import { type EntryOutcome, jobFingerprint, type WalkEntry, walkJob } from '../../src/scout/jobs/walk.ts';
import { WalkFingerprints } from '../../src/scout/jobs/walk-fingerprints.ts';

const work = mkdtempSync(join(tmpdir(), 'backupd-walk-fp-'));
after(() => rmSync(work, { recursive: true, force: true }));
const CONFIG: JobConfig = { job_name: 'fp', include_hidden: true, follow_symlinks: false, exclude: [] };

/** A path under `root` from byte strings (one character per byte). */
const at = (root: string, rel: string) => Buffer.concat([Buffer.from(`${root}/`), bytesOf(rel)]);

/** Files (`f`), empty folders (`d`) and symlinks (`l`) by relative byte-string path. */
function build(root: string, entries: Array<[string, 'f' | 'd' | 'l']>): void {
  mkdirSync(root, { recursive: true });
  for (const [rel, kind] of entries) {
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i += 1)
      mkdirSync(at(root, parts.slice(0, i).join('/')), { recursive: true });
    if (kind === 'd') mkdirSync(at(root, rel), { recursive: true });
    else if (kind === 'l') symlinkSync('target', at(root, rel));
    else writeFileSync(at(root, rel), 'x'.repeat(rel.length % 7));
  }
}

/**
 * The walk with the streamed fingerprints, the archive's outcome of each entry given by
 * `outcomeOf`, against jobFingerprint over the entries each variant counts.
 */
async function compare(
  root: string,
  outcomeOf: (entry: WalkEntry) => EntryOutcome = () => 'archived',
  config: Partial<JobConfig> = {},
) {
  const counted = (outcome: EntryOutcome) => outcome !== 'left_out';
  const complete = (outcome: EntryOutcome) => outcome === 'archived';
  const fingerprints = new WalkFingerprints([{}, { counts: complete }, { counts: complete, mtimes: true }]);
  const walked: Array<{ entry: WalkEntry; outcome: EntryOutcome }> = [];
  const walk = walkJob(root, { ...CONFIG, ...config }, { fingerprints });
  let step = await walk.next();
  while (!step.done) {
    const outcome = step.value.type === 'dir' ? 'archived' : outcomeOf(step.value);
    walked.push({ entry: step.value, outcome });
    step = await walk.next(outcome);
  }
  const of = (keep: (o: EntryOutcome) => boolean) =>
    walked.filter((w) => keep(w.outcome)).map((w) => w.entry);
  assert.deepEqual(fingerprints.digests(), [
    jobFingerprint(of(counted)),
    jobFingerprint(of(complete)),
    jobFingerprint(of(complete), { mtimes: true }),
  ]);
  return walked.map((w) => w.entry);
}

const TRICKY: Array<[string, 'f' | 'd' | 'l']> = [
  ['a/inner', 'f'],
  ['a.txt', 'f'],
  ['a-b/deep/file', 'f'],
  ['a b', 'f'],
  ['a\x01', 'f'],
  ['a0', 'f'],
  ['e', 'd'],
  ['e.txt', 'f'],
  ['e-x', 'd'],
  ['e-x.y/z', 'f'],
  ['emptied/only-excluded.tmp', 'f'],
  ['emptied.txt', 'f'],
  ['n\xff\xfe', 'd'],
  ['n\xff\xfe.bin', 'f'],
  ['n\xff', 'f'],
  ['caf\xc3\xa9', 'd'],
  ['caf\xc3\xa9-1', 'f'],
  [`${'long'.repeat(60)}/${'x'.repeat(200)}`, 'f'],
  [`${'long'.repeat(60)}.old`, 'd'],
  ['link', 'l'],
  ['link.d/x', 'f'],
  // A chain of folders each extending the last with a byte below '/': more open at once than
  // the hash branches kept (fingerprint.ts), some empty, some not.
  ['c', 'd'],
  ['c-', 'd'],
  ['c--/f', 'f'],
  ['c---', 'd'],
  ['c----', 'd'],
  ['c-----/g', 'f'],
  ['c------', 'd'],
  ['c-------', 'd'],
  ['c-------.', 'f'],
];

describe('the fingerprint streamed by the walk', () => {
  const tricky = join(work, 'tricky');
  build(tricky, TRICKY);

  test('equals jobFingerprint over the walked list on names that sort differently as paths', async () => {
    const entries = await compare(tricky, undefined, { exclude: ['*.tmp'] });
    const paths = entries.map((entry) => byteString(entry.path));
    // The walk visits entries in the byte order of their records: a folder after "its name + a
    // byte below '/'" siblings.
    assert.ok(paths.indexOf('a.txt') < paths.indexOf('a'));
    assert.ok(paths.indexOf('a b') < paths.indexOf('a'));
    assert.ok(paths.indexOf('a') < paths.indexOf('a0'));
    assert.ok(paths.indexOf('emptied') > paths.indexOf('emptied.txt'));
  });

  test('equals it when the archive leaves entries out or archives them incomplete', async () => {
    const files = (await compare(tricky)).filter((entry) => entry.type !== 'dir');
    // Every file in turn left out, then archived incomplete: folders emptied by it change place.
    for (const outcome of ['left_out', 'incomplete'] as const) {
      for (const target of files) {
        await compare(tricky, (entry) => (entry.path.equals(target.path) ? outcome : 'archived'));
      }
    }
    // All files of the chain and of "a" at once.
    await compare(tricky, (entry) => (/^(c|a[-/.])/.test(byteString(entry.path)) ? 'left_out' : 'archived'));
    await compare(tricky, (entry) => (byteString(entry.path).startsWith('c') ? 'incomplete' : 'archived'));
  });

  test('equals it on random trees of colliding names', async () => {
    const alphabet = ['a', 'b', '.', '-', ' ', '\x01', '0', '\xff', '\xc3\xa9'];
    let seed = 27;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 12; round += 1) {
      const root = join(work, `random-${round}`);
      const entries: Array<[string, 'f' | 'd' | 'l']> = [];
      const seen = new Set<string>();
      for (let i = 0; i < 40; i += 1) {
        const depth = 1 + random(3);
        const parts = Array.from({ length: depth }, () =>
          Array.from({ length: 1 + random(3) }, () => alphabet[random(alphabet.length)]).join(''),
        );
        if (parts.some((part) => part === '.' || part === '..')) continue;
        const rel = parts.join('/');
        // A name used as a file and as a folder cannot both exist: keep the first.
        if (
          [...seen].some(
            (other) => other.startsWith(`${rel}/`) || rel.startsWith(`${other}/`) || other === rel,
          )
        )
          continue;
        seen.add(rel);
        entries.push([rel, (['f', 'f', 'd', 'l'] as const)[random(4)] as 'f' | 'd' | 'l']);
      }
      build(root, entries);
      const files = (await compare(root)).filter((entry) => entry.type !== 'dir');
      const drop = new Set(files.filter(() => random(3) === 0).map((entry) => byteString(entry.path)));
      await compare(root, (entry) => (drop.has(byteString(entry.path)) ? 'left_out' : 'archived'));
      await compare(root, (entry) => (drop.has(byteString(entry.path)) ? 'incomplete' : 'archived'));
    }
  });
});
