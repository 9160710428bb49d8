// Finds the jobs under the scan root: folders holding a `.upload_dir` file. Symlinks are never
// followed, unreadable folders are skipped, and a job folder is not searched for nested jobs.
import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import { logger } from '../../core/log.ts';
import { compareBytes } from './byte-order.ts';
import { type JobConfig, MARKER, parseMarker } from './marker.ts';
import { MarkerFileError, readMarkerText } from './marker-file.ts';
import { type ClaimHistory, NO_HISTORY, settleNameClaims } from './name-claims.ts';
import { createPacer, type Pacer } from './pace.ts';

const log = logger.child({ mod: 'scout/jobs' });

/** Folder listings in flight at once. */
const CONCURRENT_LISTINGS = 16;

export interface DiscoveredJob {
  relative_path: string;
  absolute_path: string;
  /** Null exactly when `config_error` is set: such a job is shown but never run. */
  config: JobConfig | null;
  config_error: string | null;
  /** Set when this folder claims a job name that another folder keeps (name-claims.ts). */
  lost_claim?: { name: string; kept_by: string | null };
}

interface Folder {
  abs: string;
  rel: string;
}

function kindOf(entry: Dirent): 'file' | 'dir' | 'other' | 'unknown' {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'dir';
  if (entry.isSymbolicLink() || entry.isFIFO() || entry.isSocket()) return 'other';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'other';
  return 'unknown';
}

/** The entry's kind; some file systems do not report it in listings. */
async function kindAt(dir: string, entry: Dirent): Promise<'file' | 'dir' | 'other'> {
  const kind = kindOf(entry);
  if (kind !== 'unknown') return kind;
  const stats = await lstat(join(dir, entry.name)).catch(() => null);
  return stats?.isFile() ? 'file' : stats?.isDirectory() ? 'dir' : 'other';
}

/** Lists one folder: whether it is a job, and otherwise the folders to search next. */
async function visit(folder: Folder): Promise<{ job: boolean; children: Folder[] }> {
  let entries: Dirent[];
  try {
    entries = await readdir(folder.abs, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      log.warn({ path: folder.rel, code }, 'skipping unreadable folder');
    return { job: false, children: [] };
  }
  const marker = entries.find((entry) => entry.name === MARKER);
  if (marker && (await kindAt(folder.abs, marker)) === 'file') return { job: true, children: [] };
  const children: Folder[] = [];
  // `abs` is already resolved and names hold no separator: plain concatenation is enough
  // and much cheaper than join() over huge folders.
  const base = folder.abs.endsWith(sep) ? folder.abs : folder.abs + sep;
  const relBase = folder.rel === '.' ? '' : `${folder.rel}/`;
  for (const entry of entries) {
    const kind = kindOf(entry);
    if (kind !== 'dir' && (kind !== 'unknown' || (await kindAt(folder.abs, entry)) !== 'dir')) continue;
    children.push({ abs: base + entry.name, rel: relBase + entry.name });
  }
  return { job: false, children };
}

async function readJob(folder: Folder): Promise<DiscoveredJob> {
  const job = { relative_path: folder.rel, absolute_path: folder.abs };
  try {
    const parsed = parseMarker(await readMarkerText(folder.abs), basename(folder.abs));
    return { ...job, config: parsed.config, config_error: parsed.error };
  } catch (error) {
    if (error instanceof MarkerFileError) {
      const fix = error.problem === 'larger than 64 KiB' ? 'shorten it' : 'replace it with a plain file';
      return { ...job, config: null, config_error: `${MARKER}: ${error.problem}; ${fix}` };
    }
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return {
      ...job,
      config: null,
      config_error: `${MARKER}: cannot be read (${code}); check its permissions`,
    };
  }
}

/**
 * Lists folders with a few listings always in flight (the file system, not the event loop,
 * sets the pace) and returns the job folders found.
 */
function findJobFolders(root: Folder, pacer: Pacer): Promise<Folder[]> {
  const pending: Folder[] = [root];
  const found: Folder[] = [];
  let active = 0;
  let failure: unknown = null;
  return new Promise((resolvePromise, reject) => {
    const spawn = () => {
      while (failure === null && active < CONCURRENT_LISTINGS && active < pending.length) void worker();
    };
    const worker = async () => {
      active += 1;
      try {
        while (failure === null && pending.length > 0) {
          if (pacer.due()) await pacer.rest();
          const folder = pending.pop();
          if (!folder) break;
          const result = await visit(folder);
          if (result.job) found.push(folder);
          for (const child of result.children) pending.push(child);
          spawn();
        }
      } catch (error) {
        failure ??= error;
      } finally {
        active -= 1;
        if (active === 0) failure === null ? resolvePromise(found) : reject(failure);
      }
    };
    spawn();
  });
}

export async function discoverJobs(
  scanRoot: string,
  options: { signal?: AbortSignal; history?: ClaimHistory } = {},
): Promise<DiscoveredJob[]> {
  const pacer = createPacer(options.signal);
  const found = await findJobFolders({ abs: resolve(scanRoot), rel: '.' }, pacer);
  found.sort((a, b) => compareBytes(a.rel, b.rel));
  const jobs: DiscoveredJob[] = [];
  for (const folder of found) {
    if (pacer.due()) await pacer.rest();
    jobs.push(await readJob(folder));
  }
  await settleNameClaims(jobs, options.history ?? NO_HISTORY);
  return jobs;
}
