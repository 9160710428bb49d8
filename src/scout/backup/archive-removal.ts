import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { logger } from '../../core/log.ts';

const log = logger.child({ mod: 'scout/archive-removal' });

/**
 * Uploaded archives leave the staging folder at once and are deleted in the background
 * (issue #27). Deleting a staged archive is slow on a big file: the kernel frees its extents and
 * drops its cached pages, 0.2–0.3 s per 0.6 GiB on the machine the README's bench ran on, and a
 * backup spent that after the Station had stored the snapshot. An archive is renamed into
 * `<data dir>/removing/` (the same filesystem: a rename), and unlinked from there while the
 * backup ends. A new archive waits until those deletions are done (`settled`) before it is
 * written, so a nearly full disk has the space back first; what a kill leaves in the folder is
 * deleted at the next start (`sweep`).
 */
export function createArchiveRemoval(dataDir: string) {
  const folder = join(dataDir, 'removing');
  const pending = new Set<Promise<void>>();

  const unlink = (file: string) => {
    const deleting: Promise<void> = rm(file, { force: true })
      .catch((error: unknown) => log.warn({ err: error, file }, 'an uploaded archive could not be deleted'))
      .finally(() => pending.delete(deleting));
    pending.add(deleting);
  };

  return {
    /** Takes `file` out of the staging folder now; its bytes are freed in the background. */
    async remove(file: string): Promise<void> {
      const moved = join(folder, basename(file));
      try {
        await mkdir(folder, { recursive: true });
        await rename(file, moved);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        // Not movable (a read-only folder, another filesystem): deleted where it is, waited for.
        await rm(file, { force: true });
        return;
      }
      unlink(moved);
    },
    /** Resolves once every deletion started so far has finished. */
    async settled(): Promise<void> {
      await Promise.all(pending);
    },
    /** Start-up: deletes what a kill left in the folder. */
    async sweep(): Promise<void> {
      await rm(folder, { recursive: true, force: true });
    },
  };
}

export type ArchiveRemoval = ReturnType<typeof createArchiveRemoval>;
