// One classification of a snapshot that cannot be read (src/scout/restore/snapshot-failure.ts):
// a restore answers it and a drill records its words, so both say the same about a snapshot
// whose decrypted bytes are not zstd and about one holding an entry outside the job folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { AppError } from '../../src/core/errors.ts';
import { generateScoutKey } from '../../src/scout/archive/x25519.ts';
import { drillError } from '../../src/scout/drill/drills.ts';
import { readSnapshot } from '../../src/scout/drill/read-snapshot.ts';
import { restoreFailure } from '../../src/scout/restore/restore-service.ts';
import { restoreArchive } from '../../src/scout/restore/restorer.ts';
import { archiveWithTools } from '../helpers/archives.ts';
import { scratch } from '../helpers/files.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar']);
const { work, fresh } = scratch('backupd-snapshot-failure-');
const key = generateScoutKey();

/** What a restore into a fresh folder and a drill's read of `archive` fail with. */
async function failures(archive: Buffer): Promise<{ restore: unknown; drill: unknown }> {
  const restore = await restoreArchive({
    source: Readable.from([archive]),
    keys: [key],
    dest: fresh('dest'),
  }).then(
    () => assert.fail('the restore went through'),
    (error: unknown) => error,
  );
  const drill = await readSnapshot({ source: Readable.from([archive]), keys: [key] }).then(
    () => assert.fail('the drill read it'),
    (error: unknown) => error,
  );
  return { restore, drill };
}

/** The restore's answer: a 409 with `code`; the drill records the same sentence. */
function sameAnswer(found: { restore: unknown; drill: unknown }, code: string, words: RegExp): void {
  const answer = restoreFailure(found.restore);
  assert.ok(answer instanceof AppError, String(found.restore));
  assert.equal(answer.status, 409);
  assert.equal(answer.code, code);
  assert.match(answer.message, words);
  assert.equal(drillError(found.drill), answer.message, 'the drill says what the restore answers');
}

describe('restore and drill classify a broken snapshot alike', { skip }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  test('decrypted bytes that are not zstd: 409 snapshot_damaged naming zstd', async () => {
    const archive = execFileSync('sh', [
      '-c',
      'printf "not a zstd frame at all" | age -r "$0"',
      key.ageRecipient,
    ]);
    sameAnswer(await failures(archive), 'snapshot_damaged', /^the snapshot is damaged: zstd: /);
  });

  test('a zstd stream cut short: 409 snapshot_damaged naming zstd', async () => {
    const src = fresh('src');
    writeFileSync(join(src, 'f.bin'), Buffer.alloc(256 * 1024, 7));
    const whole = execFileSync('sh', ['-c', 'tar --format=posix -cf - f.bin | zstd -q -3'], { cwd: src });
    const cut = execFileSync('age', ['-r', key.ageRecipient], { input: whole.subarray(0, whole.length - 8) });
    sameAnswer(await failures(cut), 'snapshot_damaged', /^the snapshot is damaged: zstd: /);
  });

  test('an entry with an absolute path: 409 unsafe_entry, for the restore and the drill', async () => {
    const src = fresh('src');
    writeFileSync(join(src, 'f.txt'), 'f');
    const archive = archiveWithTools(src, ['-P', join(src, 'f.txt')], key.ageRecipient);
    sameAnswer(await failures(archive), 'unsafe_entry', /^restore refused: unsafe entry .*absolute path/);
  });

  test('a snapshot for another key: 409 cannot_decrypt', async () => {
    const other = generateScoutKey();
    const src = fresh('src');
    writeFileSync(join(src, 'f.txt'), 'f');
    const archive = archiveWithTools(src, ['f.txt'], other.ageRecipient);
    sameAnswer(await failures(archive), 'cannot_decrypt', /^cannot decrypt the snapshot: /);
  });
});
