import { readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { JobStates } from './job-states.ts';

/**
 * At start-up, before any backup runs: removes from the staging folder every file no job state
 * holds as its staged archive — the `.part` of an archive a kill or crash interrupted, or an
 * archive finished but killed before it was recorded (the next cycle makes it again). A staged
 * archive a job state points at is kept: it is uploaded by the next cycle. Returns the names
 * removed.
 */
export async function sweepStaging(stagingDir: string, states: JobStates): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(stagingDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const kept = new Set<string>();
  for (const row of (await states.all()).values()) {
    const staged = states.staged(row);
    if (staged) kept.add(basename(staged.file));
  }
  const removed = names.filter((name) => !kept.has(name));
  for (const name of removed) await rm(join(stagingDir, name), { recursive: true, force: true });
  return removed;
}
