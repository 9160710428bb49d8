import { conflict } from '../../core/errors.ts';
import { SnapshotExists, StagedOffsetMismatch, StagingIncomplete } from '../storage/store-errors.ts';

/**
 * A store's refusal (src/station/storage/store-errors.ts) as the upload protocol answers it; any
 * other error is returned as it is. The one place upload-protocol 409s are made of store errors.
 */
export function storeRefusal(error: unknown): unknown {
  if (error instanceof StagedOffsetMismatch) {
    return conflict({
      status: 'offset_mismatch',
      next_offset: error.nextOffset,
      message: `the next offset is ${error.nextOffset}`,
    });
  }
  if (error instanceof StagingIncomplete) {
    return conflict({
      status: 'incomplete',
      next_offset: error.stagedBytes,
      message: 'not all bytes are staged',
    });
  }
  if (error instanceof SnapshotExists) {
    return conflict(
      `another snapshot named ${error.key.filename} is already stored for the job (put there outside this upload); nothing was overwritten: initiate the upload again`,
    );
  }
  return error;
}
