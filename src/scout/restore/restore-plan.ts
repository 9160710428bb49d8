// What a restore is asked (RestoreOptions) and what it answers (RestorePlan).
import type { Readable } from 'node:stream';
import type { ScoutKey } from '../archive/x25519.ts';
import type { RestoreProblem } from './entry-problems.ts';

export interface RestorePlan {
  /**
   * Files added and replaced (a dry run: that would be), shown as src/shared/byte-names.ts
   * escapes names; empty unless `listFiles` (a million names would be ~100 MiB).
   */
  add: string[];
  replace: string[];
  /** Files already there with the same content, mode, time (and owner as root): not rewritten. */
  unchanged: string[];
  /** How many files each list has, listed or not. */
  counts: { add: number; replace: number; unchanged: number };
  bytes: number;
  /**
   * Entries restored without part of their metadata (owner, mode, time, xattrs) or not at all
   * (a name the file system refuses, a permission, a device): the first LISTED_PROBLEMS.
   */
  problems: RestoreProblem[];
  /** All problems, listed or not. */
  problemCount: number;
}

export interface RestoreOptions {
  /** The encrypted snapshot (age → zstd → tar). */
  source: Readable;
  keys: ScoutKey[];
  /** The job folder restored into; nothing is written outside it. It must not be a symlink. */
  dest: string;
  /** A folder `dest` lies in (the scan root): no folder between them may be a symlink either. */
  within?: string;
  /**
   * Restore only these entries and what lies below them (byte strings as safeRelative gives
   * them); the whole snapshot when absent. A chosen path the snapshot lacks is a problem.
   */
  paths?: string[];
  /** List what would be added and replaced, write nothing. */
  dryRun?: boolean;
  /** Name each file in the plan's lists (default true); `counts` are kept either way. */
  listFiles?: boolean;
  signal?: AbortSignal;
  /** Called after each file is in place, with the file bytes restored so far. */
  onProgress?: (bytesRestored: number) => void;
  /**
   * Restore progress in its one unit: the archive (encrypted) bytes read so far, out of the
   * snapshot's size — what a download reports, and what an ETA is computed from.
   */
  onSourceBytes?: (bytesRead: number) => void;
  /**
   * Restore owners (uid/gid), setuid/setgid bits and security.*, trusted.* and ACL xattrs, as
   * `tar` does for root. Defaults to whether this process runs as root; without it files lose
   * their setuid/setgid bits.
   */
  asRoot?: boolean;
  /** An entry was restored in part or not at all; the restore goes on. */
  onProblem?: (problem: RestoreProblem) => void;
}
