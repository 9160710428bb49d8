import type { SnapshotKey } from './storage.ts';

/**
 * What a store refuses about what it holds. Stores raise these and never protocol answers;
 * the upload layer (src/station/uploads/store-refusals.ts) and the snapshot service
 * (src/station/services/snapshots.ts) say them to clients.
 */

/** `complete` found another snapshot under the upload's name: nothing was overwritten. */
export class SnapshotExists extends Error {
  readonly key: SnapshotKey;
  constructor(key: SnapshotKey) {
    super(`a snapshot named ${key.filename} is already stored for the job`);
    this.name = 'SnapshotExists';
    this.key = key;
  }
}

/** `append` at an offset other than the bytes the store holds of the upload. */
export class StagedOffsetMismatch extends Error {
  readonly nextOffset: number;
  constructor(nextOffset: number) {
    super(`the next offset is ${nextOffset}`);
    this.name = 'StagedOffsetMismatch';
    this.nextOffset = nextOffset;
  }
}

/** `complete` before every byte of the upload was staged. */
export class StagingIncomplete extends Error {
  readonly stagedBytes: number;
  constructor(stagedBytes: number) {
    super(`not all bytes are staged (${stagedBytes} are)`);
    this.name = 'StagingIncomplete';
    this.stagedBytes = stagedBytes;
  }
}

/** `remove` of an object the bucket still holds under S3 Object Lock retention. */
export class SnapshotLocked extends Error {
  constructor(objectKey: string) {
    super(`the bucket refuses to delete ${objectKey}: its object lock has not expired`);
    this.name = 'SnapshotLocked';
  }
}
