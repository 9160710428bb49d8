import { logger } from '../../core/log.ts';
import { type DiscoveredJob, discoverJobs } from '../jobs/discovery.ts';
import { type ClaimHistory, NO_HISTORY } from '../jobs/name-claims.ts';
import { checkScanRoot } from '../jobs/scan-root.ts';

const log = logger.child({ mod: 'scout/jobs' });

/**
 * The jobs found under the scan root. The first search runs in the background at start-up
 * (`discovering` until it ends); cycles and job edits search again. `history` says who keeps
 * a job name claimed twice (src/scout/jobs/name-claims.ts); `onLostClaim` hears once of each
 * folder refused for a name another folder keeps, and again only after the conflict was gone.
 */
export function createJobCatalog(
  scanRoot: string,
  options: {
    history?: () => Promise<ClaimHistory>;
    onLostClaim?: (job: DiscoveredJob) => void;
  } = {},
) {
  let jobs: DiscoveredJob[] = [];
  let discovering = true;
  let searching: Promise<DiscoveredJob[]> | null = null;
  let toldLost = new Set<string>();

  function tellLostClaims(found: DiscoveredJob[]): void {
    const lost = new Set<string>();
    for (const job of found) {
      if (!job.lost_claim) continue;
      const key = `${job.relative_path}\0${job.lost_claim.name}\0${job.lost_claim.kept_by}`;
      lost.add(key);
      if (!toldLost.has(key)) options.onLostClaim?.(job);
    }
    toldLost = lost;
  }

  async function search(): Promise<DiscoveredJob[]> {
    const history = (await options.history?.()) ?? NO_HISTORY;
    const found = await discoverJobs(scanRoot, { history });
    tellLostClaims(found);
    return found;
  }

  function refresh(): Promise<DiscoveredJob[]> {
    searching ??= search()
      .then((found) => {
        jobs = found;
        return found;
      })
      .catch((error: unknown) => {
        log.error({ err: error }, 'job discovery failed');
        return jobs;
      })
      .finally(() => {
        discovering = false;
        searching = null;
      });
    return searching;
  }

  return {
    scanRoot,
    refresh,
    /** Why no job can be found (the scan root is missing or not a folder), saying what to do; null when fine. */
    problem: () => checkScanRoot(scanRoot),
    snapshot: () => ({ jobs, discovering }),
    /** The job whose folder is `relativePath`, after a fresh search. */
    async byPath(relativePath: string): Promise<DiscoveredJob | undefined> {
      return (await refresh()).find((j) => j.relative_path === relativePath);
    },
    /** The job containing `relativePath` (its folder or anything below it). */
    async containing(relativePath: string): Promise<DiscoveredJob | undefined> {
      const found = await refresh();
      return found
        .filter(
          (j) =>
            j.relative_path === '.' ||
            relativePath === j.relative_path ||
            relativePath.startsWith(`${j.relative_path}/`),
        )
        .sort((a, b) => b.relative_path.length - a.relative_path.length)[0];
    },
  };
}

export type JobCatalog = ReturnType<typeof createJobCatalog>;
