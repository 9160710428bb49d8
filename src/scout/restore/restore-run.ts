// One restore's state and reporting (the plan, problems, its own files, the folders to finish),
// shared by the modules that restore entries: restorer.ts, new-files.ts.
import type { Stats } from 'node:fs';
import { logger } from '../../core/log.ts';
import { shown } from './byte-paths.ts';
import { LISTED_PROBLEMS } from './entry-problems.ts';
import { OwnFiles } from './own-files.ts';
import type { RestoreOptions, RestorePlan } from './restore-plan.ts';
import type { TarEntry } from './tar-reader.ts';
import { createXattrApplier, restorableXattrs } from './xattr-applier.ts';

const log = logger.child({ mod: 'scout/restore' });

/** A folder the restore made or found: its owner, mode and time are set last (finishFolder). */
export interface RestoredFolder {
  rel: string;
  entry: TarEntry;
  dev: number;
  ino: number;
}

const NO_NAME = Buffer.alloc(0);

/**
 * An entry kept for later (a folder's metadata until the end, a queued file's until it is
 * written) without its name buffers: each small Buffer keeps the 8 KiB pool slab it was cut
 * from alive, so 10,000 folders held up to 80 MiB of slabs.
 */
export const withoutNames = (entry: TarEntry): TarEntry => ({ ...entry, path: NO_NAME, linkname: NO_NAME });

export class RestoreRun {
  readonly options: RestoreOptions;
  readonly asRoot: boolean;
  readonly plan: RestorePlan = {
    add: [],
    replace: [],
    unchanged: [],
    counts: { add: 0, replace: 0, unchanged: 0 },
    bytes: 0,
    problems: [],
    problemCount: 0,
  };
  /** Files a dry run would write / a restore wrote: the only targets a hard link may have. */
  readonly ownFiles = new OwnFiles();
  readonly folders: RestoredFolder[] = [];
  readonly xattrs: ReturnType<typeof createXattrApplier>;
  readonly #listFiles: boolean;

  constructor(options: RestoreOptions) {
    this.options = options;
    this.asRoot = options.asRoot ?? process.getuid?.() === 0;
    this.#listFiles = options.listFiles ?? true;
    this.xattrs = createXattrApplier((path, message) => this.problemShown(path, message));
  }

  /** A folder made or found, to finish last (owner, mode, time). */
  addFolder(rel: string, entry: TarEntry, made: { dev: number; ino: number }): void {
    this.folders.push({ rel, entry: withoutNames(entry), dev: made.dev, ino: made.ino });
  }

  /** Counts a file in the plan (and names it there when listing). */
  note(kind: 'add' | 'replace' | 'unchanged', rel: string): void {
    this.plan.counts[kind] += 1;
    if (this.#listFiles) this.plan[kind].push(shown(rel));
  }

  /** A problem of the entry shown as `path`: logged, counted, listed (the first ones), reported. */
  problemShown(path: string, message: string): void {
    log.warn({ path }, message);
    this.plan.problemCount += 1;
    const problem = { path, message };
    if (this.plan.problems.length < LISTED_PROBLEMS) this.plan.problems.push(problem);
    this.options.onProblem?.(problem);
  }

  problem(rel: string, message: string): void {
    this.problemShown(shown(rel), message);
  }

  /** A file's bytes counted and reported. */
  fileDone(entry: Pick<TarEntry, 'size'>): void {
    this.plan.bytes += entry.size;
    this.options.onProgress?.(this.plan.bytes);
  }

  /** Whether an existing file's size, mode, time (and owner, as root) are the entry's, with no xattrs to restore. */
  sameMetadata(s: Stats, entry: TarEntry): boolean {
    if (restorableXattrs(entry.xattrs, this.asRoot).length > 0) return false;
    let mode = entry.mode & 0o7777;
    if (!this.asRoot) mode &= ~0o6000;
    return (
      s.size === entry.size &&
      (s.mode & 0o7777) === mode &&
      Math.floor(s.mtimeMs / 1000) === Math.floor(entry.mtimeMs / 1000) &&
      (!this.asRoot || (s.uid === entry.uid && s.gid === entry.gid))
    );
  }
}
