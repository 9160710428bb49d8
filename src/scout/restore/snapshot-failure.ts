import { AppError, conflict } from '../../core/errors.ts';
import { AgeError } from '../archive/age.ts';
import { StationError } from '../upload/station-client.ts';
import { stationAppError } from '../upload/station-errors.ts';
import { DiskFullError, isDiskFull } from './entry-problems.ts';
import { UnsafeEntryError } from './safe-tree.ts';
import { ZstdError } from './snapshot-stream.ts';
import { TarError } from './tar-reader.ts';

/**
 * What went wrong reading a snapshot, as an error with a stable code and words that say what
 * it means: the one classification a restore (API and CLI) answers with and a drill records.
 * Null for anything else (a local I/O failure, a bug), which the caller keeps as it is.
 */
export function snapshotFailure(error: unknown): AppError | null {
  if (error instanceof StationError) return stationAppError(error);
  if (error instanceof AgeError) {
    return conflict(
      `cannot decrypt the snapshot: ${error.message}; it is damaged or needs the Scout key it was made with`,
      'cannot_decrypt',
    );
  }
  if (error instanceof UnsafeEntryError) return conflict(`restore refused: ${error.message}`, 'unsafe_entry');
  if (error instanceof TarError || error instanceof ZstdError) {
    return conflict(`the snapshot is damaged: ${error.message}`, 'snapshot_damaged');
  }
  if (error instanceof DiskFullError || isDiskFull(error)) {
    const where = error instanceof DiskFullError ? ` (at "${error.entry}")` : '';
    return new AppError(
      507,
      `the disk the restore writes to is full${where}: free some space there (or restore elsewhere with a destination) and restore again; the files restored so far are whole`,
      { code: 'disk_full' },
    );
  }
  return null;
}
