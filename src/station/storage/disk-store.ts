import { constants } from 'node:fs';
import { mkdir, open, readdir, rm, stat, statfs, truncate, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { badRequest, notFound } from '../../core/errors.ts';
import { createStagedWriter } from './disk-append.ts';
import { placeFile, probeWritable, subdirs, TEMP_PREFIX, unlessGone } from './disk-files.ts';
import { isSnapshotFilename } from './keys.ts';
import { instanceFolders, jobFolders, snapshotSegments } from './layout.ts';
import type {
  SnapshotKey,
  SnapshotStore,
  StagedUpload,
  StagingArea,
  StorageHealth,
  StoredFile,
} from './storage.ts';
import { SnapshotExists } from './store-errors.ts';

const UPLOAD_ID = /^[A-Za-z0-9_-]{1,100}$/;
const STAGED_SUFFIX = '.part';
/**
 * The chunk a disk Station asks for (any size is taken); proxies must allow it (README). Each
 * chunk is a request with its own token check, session lookup (two PGlite queries, ~1.8
 * CPU-ms each), opens and answer: 4–7 CPU-ms per chunk, measured with 1–4 MiB chunks through
 * bench/station.ts' upload. 32 MiB chunks halve that to ~0.15 CPU-s per received GiB (16 MiB:
 * ~0.3). 64 MiB, a bucket's chunk too (four parts), took the Station's CPU per received GiB of
 * a first backup (bench/scout.ts, 1 GiB dataset) from 1.89–2.17 (mean 2.05) to 1.67–2.22
 * (mean 1.94): lower in 10 of 12 alternated pairs on a loaded machine. A streamed upload's
 * last chunk, sent after the archive is sealed, is up to this size; the Scout halves its
 * chunks on a slow link.
 */
const DISK_CHUNK_BYTES = 64 * 1024 * 1024;
/** A replica copies in pieces of this size (its `bytes_copied` moves each piece). */
const DISK_COPY_PIECE_BYTES = 16 * 1024 * 1024;
/**
 * A snapshot is read this much at a time, a smaller one in one piece of its own size: a read
 * stream takes a fresh buffer of its highWaterMark for every read, so 1 MiB for each of the
 * 10,000 ~1 KiB snapshots that a start-up reconcile hashes spent 7.6 s of its 23 CPU-s in GC.
 */
const READ_PIECE_BYTES = 1024 * 1024;
/** Files of one job folder stat'ed at once while listing. */
const STAT_AT_ONCE = 64;

/**
 * Snapshots on the local disk under BACKUP_ROOT, uploads staged in STAGING_DIR as
 * `<upload_id>.part`. Every path is built from validated components, so nothing reaches outside
 * the root (the layout is layout.ts). A snapshot appears only complete: synced, then linked into
 * place under its name (link fails instead of overwriting: SnapshotExists), then the folder is
 * synced. Staged bytes
 * are not synced per chunk: `stagedBytes` is the file's length and finalize checks the SHA-256.
 */
export function createDiskStore(dirs: { backupRoot: string; stagingDir: string }): SnapshotStore {
  const root = dirs.backupRoot;
  const writer = createStagedWriter();

  const pathOf = (key: SnapshotKey): string => join(root, ...snapshotSegments(key));

  function stagedPath(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw badRequest('upload id must be letters, digits, _ and -');
    return join(dirs.stagingDir, `${uploadId}${STAGED_SUFFIX}`);
  }

  async function sizeOf(path: string): Promise<number> {
    try {
      return (await stat(path)).size;
    } catch {
      return 0;
    }
  }

  async function statKey(key: SnapshotKey) {
    try {
      const s = await stat(pathOf(key));
      return s.isFile() ? { sizeBytes: s.size, mtimeMs: Math.round(s.mtimeMs) } : null;
    } catch (error) {
      if ((error as { status?: number }).status === 400) throw error;
      return null;
    }
  }

  /** Places a complete file under `key` (SnapshotExists when the name is taken) and describes it. */
  async function place(source: string, key: SnapshotKey): Promise<StoredFile> {
    const path = pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    try {
      await placeFile(source, dirname(path), basename(path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new SnapshotExists(key);
      throw error;
    }
    const stats = await statKey(key);
    return { ...key, sizeBytes: stats?.sizeBytes ?? 0, mtimeMs: stats?.mtimeMs ?? 0 };
  }

  /** Every job folder of the instance layout. */
  async function* jobDirs() {
    for (const scoutId of await subdirs(root)) {
      for (const instanceId of await subdirs(join(root, scoutId))) {
        for (const jobName of await subdirs(join(root, ...instanceFolders(scoutId, instanceId)))) {
          const job = { scoutId, instanceId, jobName };
          yield { ...job, dir: join(root, ...jobFolders(job)) };
        }
      }
    }
  }

  return {
    kind: 'disk',

    /**
     * Start-up: creates the folders and removes the temporaries that interrupted commits across
     * filesystems left (only here: while the Station runs, a temporary may be a commit in progress).
     */
    async prepare() {
      for (const dir of [root, dirs.stagingDir]) await mkdir(dir, { recursive: true });
      for await (const { dir } of jobDirs()) {
        for (const entry of await readdir(dir, { withFileTypes: true })) {
          if (entry.isFile() && entry.name.startsWith(TEMP_PREFIX))
            await rm(join(dir, entry.name), { force: true });
        }
      }
    },

    async health(): Promise<StorageHealth> {
      const problems = (await Promise.all([probeWritable(root), probeWritable(dirs.stagingDir)])).filter(
        (p): p is string => p !== null,
      );
      const writable = problems.length === 0;
      const problem = writable ? {} : { problem: problems.join('; ') };
      try {
        const fs = await statfs(root);
        const space = { free_bytes: fs.bavail * fs.bsize, total_bytes: fs.blocks * fs.bsize };
        return { kind: 'disk', backup_root: root, ...space, writable, ...problem };
      } catch (error) {
        const why = `${root}: ${(error as Error).message}`;
        return {
          kind: 'disk',
          backup_root: root,
          free_bytes: null,
          total_bytes: null,
          writable: false,
          problem: why,
        };
      }
    },

    async space() {
      const [staging, stored, stagingStat, rootStat] = await Promise.all([
        statfs(dirs.stagingDir),
        statfs(root),
        stat(dirs.stagingDir),
        stat(root),
      ]);
      return {
        stagingFree: staging.bavail * staging.bsize,
        storedFree: stored.bavail * stored.bsize,
        sameDevice: stagingStat.dev === rootStat.dev,
      };
    },

    chunkSizeFor: () => DISK_CHUNK_BYTES,
    partSizeFor: () => DISK_COPY_PIECE_BYTES,

    async beginStaging(upload) {
      snapshotSegments(upload.target);
      const handle = await open(stagedPath(upload.uploadId), constants.O_RDWR | constants.O_CREAT);
      await handle.close();
      return null;
    },

    stagedBytes: async (upload) => sizeOf(stagedPath(upload.uploadId)),

    async append(upload, offset, body) {
      const room = upload.sizeBytes - offset;
      const path = stagedPath(upload.uploadId);
      const { kept, interrupted } = await writer.append(upload.uploadId, path, offset, body, room);
      return {
        stagedBytes: offset + kept,
        keptBytes: kept,
        state: null,
        ...(interrupted ? { interrupted } : {}),
      };
    },

    async stagedSha256(upload) {
      const path = stagedPath(upload.uploadId);
      return writer.sha256(upload.uploadId, path, await sizeOf(path));
    },

    async resetStaging(upload: StagedUpload) {
      writer.forget(upload.uploadId);
      await truncate(stagedPath(upload.uploadId), 0);
      return { ...upload, state: null };
    },

    async abortStaging(area: StagingArea) {
      if (area.uploadId === null) return;
      writer.forget(area.uploadId);
      await rm(stagedPath(area.uploadId), { force: true });
    },

    async complete(upload) {
      const stored = await place(stagedPath(upload.uploadId), upload.target);
      writer.forget(upload.uploadId);
      return stored;
    },

    async *listStaging() {
      let names: string[];
      try {
        names = await readdir(dirs.stagingDir);
      } catch {
        return;
      }
      for (const name of names) {
        if (!name.endsWith(STAGED_SUFFIX)) continue;
        const uploadId = name.slice(0, -STAGED_SUFFIX.length);
        if (!UPLOAD_ID.test(uploadId)) continue;
        const s = await stat(join(dirs.stagingDir, name)).catch(() => null);
        yield {
          uploadId,
          target: null,
          state: null,
          startedMs: s ? Math.round(s.birthtimeMs || s.mtimeMs) : null,
        };
      }
    },

    stat: statKey,

    exists: async (key) => (await statKey(key)) !== null,

    localPath: pathOf,

    async read(key, range) {
      const handle = await open(pathOf(key), 'r').catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'ENOENT' ? notFound(`snapshot ${key.filename} not found`) : error;
      });
      try {
        const bytes = range ? range.end - range.start + 1 : (await handle.stat()).size;
        return handle.createReadStream({
          ...(range ? { start: range.start, end: range.end } : {}),
          highWaterMark: Math.max(1, Math.min(READ_PIECE_BYTES, bytes)),
        });
      } catch (error) {
        await handle.close();
        throw error;
      }
    },

    async remove(key) {
      try {
        await unlink(pathOf(key));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },

    async removeInstance(scoutId, instanceId) {
      await rm(join(root, ...instanceFolders(scoutId, instanceId)), { recursive: true, force: true });
    },

    /**
     * Every snapshot file in the instance layout (temporaries of commits in progress are not).
     * A job's files are stat'ed STAT_AT_ONCE at a time: one after the other, 300,000 thread-pool
     * round trips left start-up's reconcile idle for ~22 s (bench/overview.ts).
     */
    async *list(): AsyncGenerator<StoredFile> {
      // Retention and uploads go on while a verification run lists: a folder or file that goes
      // between its listing and its stat is simply not there.
      for await (const { scoutId, instanceId, jobName, dir } of jobDirs()) {
        const names = (await readdir(dir, { withFileTypes: true }).catch(unlessGone([])))
          .filter((entry) => entry.isFile() && isSnapshotFilename(entry.name))
          .map((entry) => entry.name);
        for (let at = 0; at < names.length; at += STAT_AT_ONCE) {
          const group = names.slice(at, at + STAT_AT_ONCE);
          const stats = await Promise.all(
            group.map((filename) => stat(join(dir, filename)).catch(unlessGone(null))),
          );
          for (const [i, filename] of group.entries()) {
            const s = stats[i];
            if (!s) continue;
            yield {
              scoutId,
              instanceId,
              jobName,
              filename,
              sizeBytes: s.size,
              mtimeMs: Math.round(s.mtimeMs),
            };
          }
        }
      }
    },
  };
}
