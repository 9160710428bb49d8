// What stops a restore and what is only one entry's problem. An entry that would write
// outside the destination, a damaged or undecryptable archive, a full disk or a cancel stop it;
// a name the file system refuses, a permission, an owner that cannot be set, a device entry
// are problems of that entry: collected, and the restore goes on with the next one.
import { RefusedEntryError } from './safe-tree.ts';

/** One entry restored in part or not at all. `path` is shown as src/shared/byte-names.ts escapes it. */
export interface RestoreProblem {
  path: string;
  message: string;
}

/** Problems kept in a restore's result (all are counted, and each is passed to `onProblem`). */
export const LISTED_PROBLEMS = 1000;

/** Errors of one entry's file system calls: the next entry may well succeed. */
const ENTRY_CODES = new Set([
  'EACCES',
  'EPERM',
  'ENAMETOOLONG',
  'EILSEQ',
  'EINVAL',
  'EEXIST',
  'ENOTDIR',
  'EISDIR',
  'ELOOP',
  'EMLINK',
  'EXDEV',
  'ENOTEMPTY',
  'EBUSY',
  'ETXTBSY',
  'EOVERFLOW',
  'EFBIG',
  'EROFS',
  'ENOTSUP',
  'EOPNOTSUPP',
]);

/** Whether `error` is one entry's problem rather than a reason to stop the restore. */
export function isEntryProblem(error: unknown): boolean {
  if (error instanceof RefusedEntryError) return true;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && ENTRY_CODES.has(code);
}

/** Whether `error` says the file system the restore writes to is full (space or inodes, or a quota). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * The destination's file system filled up while `entry` was written: the restore stops (the
 * entry written in part is removed; those before it are whole). Its message names the entry,
 * not the descriptor path the restore writes through (`/proc/<pid>/fd/…`).
 */
export class DiskFullError extends Error {
  override name = 'DiskFullError';
  readonly entry: string;

  constructor(entry: string, cause: unknown) {
    super(`the disk is full (${reasonOf(cause)}) while restoring "${entry}"`, { cause });
    this.entry = entry;
  }
}

/** A system error said without the internal path it names: "permission denied (EACCES)". */
export function reasonOf(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (error instanceof RefusedEntryError || !code) return String(message ?? error);
  const said = /^[A-Z0-9]+: ([^,]+)/.exec(message)?.[1];
  return said ? `${said} (${code})` : code;
}
