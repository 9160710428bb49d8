// Snapshot archives made with the real programs, the way a restore must be able to read them.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `tar --format=posix <tarArgs> -cf - | zstd -q -3 | age -r <recipient>`, run in `cwd`. */
export function archiveWithTools(cwd: string, tarArgs: string[], recipient: string): Buffer {
  return execFileSync(
    'sh',
    ['-c', 'tar --format=posix "$@" -cf - | zstd -q -3 | age -r "$0"', recipient, ...tarArgs],
    { cwd, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
  );
}

/** `age -d -i <key> | zstd -d | tar -x -C <into>` of a snapshot's bytes with the Scout's age identity. */
export function unpackWithTools(archive: Uint8Array, ageIdentity: string, into: string): void {
  const work = mkdtempSync(join(tmpdir(), 'snapshot-unpack-'));
  try {
    writeFileSync(join(work, 'snap.tar.zst'), archive);
    writeFileSync(join(work, 'key.txt'), `${ageIdentity}\n`, { mode: 0o600 });
    mkdirSync(into, { recursive: true });
    execFileSync('sh', ['-c', 'age -d -i key.txt snap.tar.zst | zstd -d | tar -x -C "$0"', into], {
      cwd: work,
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface NewestSnapshot {
  stationUrl: string;
  credential: string;
  scout: { scout_id: string; scout_instance_id: string; age_identity: string };
  job: string;
}

/**
 * Runs `script` (sh, in a temporary folder holding the job's newest snapshot as `snap.tar.zst`
 * and the Scout's key as `key.txt`) and answers its output. The snapshot is downloaded through
 * the recovery API with a Station token bound to the Scout.
 */
export async function withNewestSnapshot(options: NewestSnapshot, script: string): Promise<string> {
  const { stationUrl, credential, scout, job } = options;
  const res = await fetch(
    `${stationUrl}/backup/recovery/${scout.scout_id}/${scout.scout_instance_id}/${job}/latest`,
    { headers: { authorization: `Bearer ${credential}` } },
  );
  if (res.status !== 200) throw new Error(`downloading the newest snapshot of ${job}: ${res.status}`);
  const work = mkdtempSync(join(tmpdir(), 'snapshot-entries-'));
  try {
    writeFileSync(join(work, 'snap.tar.zst'), Buffer.from(await res.arrayBuffer()));
    writeFileSync(join(work, 'key.txt'), `${scout.age_identity}\n`, { mode: 0o600 });
    return execFileSync('sh', ['-c', script], { cwd: work, encoding: 'utf8' });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The entries of a job's newest snapshot on a Station (tar's listing, folders ending in '/'):
 * `age -d | zstd -d | tar -t` with the Scout's key.
 */
export async function newestSnapshotEntries(options: NewestSnapshot): Promise<string[]> {
  const listing = await withNewestSnapshot(options, 'age -d -i key.txt snap.tar.zst | zstd -d | tar -t');
  return listing.split('\n').filter(Boolean);
}
