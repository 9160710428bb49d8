import { setFlagsFromString } from 'node:v8';

/**
 * Room for the Scout's old generation to grow to 1.5× what survived the last full collection
 * before the next one starts. V8's own heuristic allows ~3× while the process collects little
 * (high mutator utilisation), and a backup of many small files promotes a steady stream of
 * short-lived objects (per-file stats, headers, promises): `--trace-gc` of the million-file
 * dataset's backup showed the main heap at 17 MiB live growing to 52 MiB (57 committed) before
 * its first full collection, then a pool of freed pages kept; a 1 GiB backup's heap reached
 * 40–47 MiB committed. Measured (Scout from dist, fresh Scout and Station, A/B taking turns on a
 * loaded machine): the million-file backup's peak RSS 201 / 202 → 176 / 175 MiB, its Scout CPU
 * 99.1 / 87.2 → 94.6 / 91.8 s (no difference beyond the noise); the 1 GiB dataset's backup, own
 * restore and two backups peaked 180–189 → 174–180 MiB, CPU per backup 11.6–14.0 → 11.1–13.9 s.
 * So the peak no longer grows with the number of files (issue #27: the same ±10 % at 1 GiB,
 * 4 GiB and a million files). V8 reads the factor at each collection, so it can be set while
 * running (the own restore widens it for its run: restore/restore-v8-settings.ts).
 */
export const TIGHT_OLD_GENERATION = '--heap-growing-percent=50';

export function keepOldGenerationTight(setFlags: (flags: string) => void = setFlagsFromString): void {
  setFlags(TIGHT_OLD_GENERATION);
}
