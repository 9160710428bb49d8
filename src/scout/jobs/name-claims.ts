// Several `.upload_dir` markers claiming one job name. Job names are unique on a Scout (the
// Station keeps a job's snapshots by name), so at most one of the folders can be backed up
// under it. Refusing them all let any local user switch the admin's job off: a folder anyone
// can write to, with `job_name: payroll` in its marker, stopped the backups of "payroll".
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiscoveredJob } from './discovery.ts';
import { MARKER } from './marker.ts';

/** What decides who keeps a name claimed twice. */
export interface ClaimHistory {
  /** The job name each folder last ran under, by relative path (the Scout's job_states). */
  ranAs: ReadonlyMap<string, string>;
  /** The Scout's own user id: a marker it owns was written by the Scout or its admin. */
  ownUid: number | null;
}

/** No history (a folder listing alone): only marker owners can tell the claimants apart. */
export const NO_HISTORY: ClaimHistory = { ranAs: new Map(), ownUid: process.getuid?.() ?? null };

async function ownedByScout(job: DiscoveredJob, ownUid: number | null): Promise<boolean> {
  if (ownUid === null) return false;
  const stats = await lstat(join(job.absolute_path, MARKER)).catch(() => null);
  return stats?.uid === ownUid;
}

/**
 * The claimant that keeps `name`, or null when none can be told apart from the others:
 * 1. the established one: the only claimant that has already run under this name (it has
 *    job state, and so snapshots on the Station, under it), wherever it sits in the tree;
 * 2. otherwise, among the established ones (or all, when none is), the only one whose marker
 *    is owned by the Scout's own user. Another user can write a marker but never one owned by
 *    the Scout's user (root), so a newcomer cannot win against the admin's new job either;
 * 3. otherwise nobody: all are refused until the names differ, as two markers written by the
 *    admin (or two by other users) give nothing safer to choose by. Folder order never decides.
 */
async function keeperOf(name: string, claimed: DiscoveredJob[], history: ClaimHistory) {
  const established = claimed.filter((job) => history.ranAs.get(job.relative_path) === name);
  if (established.length === 1) return established[0] as DiscoveredJob;
  const pool = established.length > 1 ? established : claimed;
  const owned: DiscoveredJob[] = [];
  for (const job of pool) if (await ownedByScout(job, history.ownUid)) owned.push(job);
  return owned.length === 1 ? (owned[0] as DiscoveredJob) : null;
}

/**
 * Settles every name claimed by several jobs: the keeper (keeperOf) runs on; each other claimant
 * gets `config: null`, a config_error naming the keeper (or, with no keeper, all the others)
 * and `lost_claim` set to the name, so the Scout can tell the admin.
 */
export async function settleNameClaims(jobs: DiscoveredJob[], history: ClaimHistory): Promise<void> {
  const claims = new Map<string, DiscoveredJob[]>();
  for (const job of jobs) {
    if (!job.config) continue;
    const claimed = claims.get(job.config.job_name);
    if (claimed) claimed.push(job);
    else claims.set(job.config.job_name, [job]);
  }
  for (const [name, claimed] of claims) {
    if (claimed.length < 2) continue;
    const keeper = await keeperOf(name, claimed, history);
    for (const job of claimed) {
      if (job === keeper) continue;
      const others = keeper ? [keeper] : claimed.filter((other) => other !== job);
      job.config_error = `job name "${name}" is already used by ${others.map((o) => o.relative_path).join(', ')}; set another job_name`;
      job.config = null;
      job.lost_claim = { name, kept_by: keeper?.relative_path ?? null };
    }
  }
}
