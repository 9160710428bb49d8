import type { Readable } from 'node:stream';
import type { StoreHealthView } from '../../shared/protocol/overview.ts';
import type { StoredJobKey } from '../job-key.ts';

/**
 * The one way Station services reach snapshot bytes and staged uploads. Two implementations:
 * the local disk (`disk-store.ts`, BACKUP_ROOT + STAGING_DIR) and an S3-compatible bucket
 * (`s3-store.ts`, STORAGE_URL=s3://…). Both pass `test/station/storage/storage-conformance-suite.ts`.
 *
 * Rules every implementation keeps:
 * - A snapshot appears only complete, and only through `complete` (after the caller checked
 *   the SHA-256), under the name the caller chose (src/station/uploads/reserve-name.ts): a
 *   store never chooses or changes a name, and never overwrites a stored snapshot.
 * - A store refuses with its own errors (store-errors.ts), never with protocol answers.
 * - `stagedBytes` is what the store durably holds of an upload: the next offset a client
 *   must send. Bytes of an interrupted `append` beyond it are not counted.
 * - Every path and key follows the one layout (layout.ts), built from checked components.
 */

export type { StoredJobKey } from '../job-key.ts';

export interface SnapshotKey extends StoredJobKey {
  filename: string;
}

export interface StoredFile extends SnapshotKey {
  sizeBytes: number;
  mtimeMs: number;
  /** The object-lock retention date (ms) the store set on it (S3_OBJECT_LOCK); absent otherwise. */
  lockedUntil?: number;
}

/** What `/health` and the overview report of the store (src/shared/protocol/overview.ts). */
export type StorageHealth = StoreHealthView;

/** One upload's staging area: a staged file on disk, a multipart upload in the bucket. */
export interface StagedUpload {
  uploadId: string;
  /** Where the snapshot will be stored once complete (the name reserved at initiation). */
  target: SnapshotKey;
  sizeBytes: number;
  /**
   * Opaque store state kept with the upload session in the database (the S3 multipart
   * upload id and part size); null for the disk store.
   */
  state: string | null;
}

/** A staging area as the store lists it: `target` null when the store cannot tell (disk). */
export interface StagingArea {
  uploadId: string | null;
  target: SnapshotKey | null;
  state: string | null;
}

/** Free bytes where uploads are staged and where snapshots are stored (null: not known). */
export interface StorageSpace {
  stagingFree: number | null;
  storedFree: number | null;
  /** Staging and stored snapshots draw on the same free space. */
  sameDevice: boolean;
}

export interface AppendResult {
  /** Bytes the store now holds of the upload (the next offset). */
  stagedBytes: number;
  /** Bytes of this call that were kept. */
  keptBytes: number;
  /** The new `state` to keep with the session (parts, hash state); null for the disk store. */
  state: string | null;
  /**
   * Set when the body failed before its end (the client went away): what was kept up to then
   * is described above and saved with the session, then the chunk answers 400.
   */
  interrupted?: unknown;
}

export interface SnapshotStore {
  readonly kind: 'disk' | 's3';
  /** Start-up: creates what is missing (folders, the bucket) and removes leftovers of interrupted commits. */
  prepare(): Promise<void>;
  health(): Promise<StorageHealth>;
  /**
   * The size of each chunk a client should send (the recommended chunk size): the disk store
   * takes any; S3 asks for PARTS_PER_CHUNK parts of a size chosen from the archive size
   * (≥ 5 MiB, ≤ 10,000 parts). Throws a 413 AppError for a size that cannot be stored.
   */
  chunkSizeFor(archiveSizeBytes: number): number;
  /**
   * The store's own unit for the same archive (one S3 part: the smallest piece whose state is
   * saved once whole; 16 MiB on disk, which saves every byte as it arrives). A replica copies in these, so its progress
   * (`bytes_copied`) moves every part, not every four.
   */
  partSizeFor(archiveSizeBytes: number): number;
  /**
   * Opens the staging area of a new upload; returns the `state` to keep with the session. Its
   * `sizeBytes` is what the parts are chosen for (a streamed upload's planned size).
   */
  beginStaging(upload: Omit<StagedUpload, 'state'>): Promise<string | null>;
  stagedBytes(upload: StagedUpload): Promise<number>;
  /**
   * Appends `body` at `offset` (== stagedBytes) and hashes the kept bytes as they arrive.
   * Throws a 400 AppError for a body that runs past `sizeBytes` (nothing of it is kept), a 507
   * for a full disk, StagedOffsetMismatch for an offset other than stagedBytes; what was durably
   * kept before an interruption stays (resolved with `interrupted` set, so the caller saves the
   * state). The caller
   * serialises appends of one upload (uploads/upload-lock.ts: a lease row in PostgreSQL).
   */
  append(upload: StagedUpload, offset: number, body: Readable): Promise<AppendResult>;
  /**
   * SHA-256 (hex) of all staged bytes. Computed while bytes arrived; recovered without the
   * client after a restart or when another Station received the earlier bytes (the disk store
   * re-hashes its staged file, the S3 store keeps a serialised hash state in `state`).
   */
  stagedSha256(upload: StagedUpload): Promise<string>;
  /** Throws away what was staged (a checksum mismatch): the upload restarts at offset 0. */
  resetStaging(upload: StagedUpload): Promise<StagedUpload>;
  /** Removes the staging area (abandoned, superseded, or listed with no session). Missing is fine. */
  abortStaging(area: StagingArea): Promise<void>;
  /**
   * Moves the complete staged bytes into place under `upload.target`; returns the stored file.
   * A name that is taken is SnapshotExists (nothing is overwritten; the staging area stays).
   */
  complete(upload: StagedUpload): Promise<StoredFile>;
  /** Staging areas that exist, for start-up reconciliation and the sweep. */
  listStaging(): AsyncIterable<StagingArea & { startedMs: number | null }>;
  /** Free space, when the store has a limit worth checking before an upload (the disk). */
  space?(): Promise<StorageSpace>;

  stat(key: SnapshotKey): Promise<{ sizeBytes: number; mtimeMs: number } | null>;
  exists(key: SnapshotKey): Promise<boolean>;
  /** The bytes of a snapshot, optionally a Range [start, end] inclusive. */
  read(key: SnapshotKey, range?: { start: number; end: number }): Promise<Readable>;
  /**
   * The snapshot's file on this machine, for downloads that read it with their own reused
   * buffers (several times faster than a stream of fresh buffers); only the disk store has it.
   */
  localPath?(key: SnapshotKey): string;
  /** False when there was nothing to remove; SnapshotLocked when the bucket's object lock refuses. */
  remove(key: SnapshotKey): Promise<boolean>;
  removeInstance(scoutId: string, instanceId: string): Promise<void>;
  /** Every stored snapshot (the instance layout); temporaries of commits in progress are not listed. */
  list(): AsyncIterable<StoredFile>;
}
