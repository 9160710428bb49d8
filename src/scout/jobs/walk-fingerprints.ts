// The fingerprints of a walk, computed while it streams (src/scout/jobs/walk.ts): each variant
// counts the entries whose outcome it accepts (the archive leaves some out, or archives them
// incomplete) and, with `mtimes`, their modification times. The walk visits entries in the
// order of their records (src/scout/jobs/walk-order.ts), so nothing is held but one SHA-256
// state per variant and folder in doubt (src/scout/jobs/fingerprint.ts).
import type { ByteString } from './byte-order.ts';
import { FingerprintStream, fileRecord } from './fingerprint.ts';
import type { EntryOutcome, WalkEntry } from './walk.ts';

export interface FingerprintVariant {
  /** Modification times count too (change_detection: mtimes). */
  mtimes?: boolean;
  /** Which outcomes count; default: all but `left_out`. */
  counts?: (outcome: EntryOutcome) => boolean;
}

/** A folder's place in each variant, and whether an entry under it counted there yet. */
export interface FolderMark {
  ids: number[];
  filled: boolean[];
}

const notLeftOut = (outcome: EntryOutcome) => outcome !== 'left_out';

export class WalkFingerprints {
  readonly #variants: Array<{
    stream: FingerprintStream;
    mtimes: boolean;
    counts: (o: EntryOutcome) => boolean;
  }>;

  constructor(variants: FingerprintVariant[]) {
    this.#variants = variants.map((variant) => ({
      stream: new FingerprintStream(),
      mtimes: variant.mtimes === true,
      counts: variant.counts ?? notLeftOut,
    }));
  }

  /** A folder met at the place its record would take if it were empty. */
  folder(path: ByteString): FolderMark {
    return {
      ids: this.#variants.map((variant) => variant.stream.folder(path)),
      filled: this.#variants.map(() => false),
    };
  }

  /** An entry and what became of it, inside `parent` (null: the job folder itself). */
  entry(path: ByteString, entry: WalkEntry, outcome: EntryOutcome, parent: FolderMark | null): void {
    // The record with and without the mtime, each made once for every variant that takes it.
    const records: [ByteString?, ByteString?] = [];
    this.#variants.forEach((variant, i) => {
      if (!variant.counts(outcome)) return;
      if (entry.type !== 'dir') {
        const which = variant.mtimes ? 1 : 0;
        records[which] ??= fileRecord(path, entry, variant.mtimes);
        variant.stream.record(records[which]);
      }
      if (parent && !parent.filled[i]) {
        parent.filled[i] = true;
        variant.stream.settle(parent.ids[i] as number, false);
      }
    });
  }

  /** The folder's entries are all met: it is empty where none counted. */
  close(mark: FolderMark): void {
    this.#variants.forEach((variant, i) => {
      if (!mark.filled[i]) variant.stream.settle(mark.ids[i] as number, true);
    });
  }

  /** The folder is not in the job after all (it vanished, or loops back). */
  drop(mark: FolderMark): void {
    this.#variants.forEach((variant, i) => {
      if (!mark.filled[i]) variant.stream.settle(mark.ids[i] as number, false);
    });
  }

  /** One fingerprint per variant, in the order given. */
  digests(): string[] {
    return this.#variants.map((variant) => variant.stream.digest());
  }
}
