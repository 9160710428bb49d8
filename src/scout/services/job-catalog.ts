import { logger } from '../../core/log.ts';
import { type DiscoveredJob, discoverJobs } from '../jobs/discovery.ts';

const log = logger.child({ mod: 'scout/jobs' });

/**
 * The jobs found under the scan root. The first search runs in the background at start-up
 * (`discovering` until it ends); cycles and job edits search again.
 */
export function createJobCatalog(scanRoot: string) {
  let jobs: DiscoveredJob[] = [];
  let discovering = true;
  let searching: Promise<DiscoveredJob[]> | null = null;

  function refresh(): Promise<DiscoveredJob[]> {
    searching ??= discoverJobs(scanRoot)
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
