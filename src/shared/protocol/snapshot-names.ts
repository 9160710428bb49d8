/**
 * `<job>__<YYYY-MM-DDTHH-MM-SSZ>__<fp8>[-N].tar.zst`: the name a snapshot is stored under (the
 * Station appends `-2`, `-3`, … when the name is taken).
 */
const STORED_NAME = /__(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z__([0-9a-f]{8})(?:-(\d+))?\.tar\.zst$/;

/**
 * `filename` without the Station's `-N` counter, and the counter (1 when it has none): the
 * stem of the names `-2`, `-3`, … that follow it.
 */
export function splitCounter(filename: string): { stem: string; counter: number } {
  const match = STORED_NAME.exec(filename);
  const counter = match?.[6];
  if (counter === undefined) return { stem: filename.replace(/\.tar\.zst$/, ''), counter: 1 };
  return { stem: filename.slice(0, -`-${counter}.tar.zst`.length), counter: Number(counter) };
}

/** The name `stem` takes with the Station's counter `n` (`…__<fp8>-3.tar.zst`). */
export const numberedName = (stem: string, n: number): string => `${stem}-${n}.tar.zst`;

/** The name a snapshot of `jobName` taken at `timestamp` (YYYY-MM-DDTHH:MM:SSZ) is stored under. */
export function snapshotFileName(jobName: string, timestamp: string, fingerprint: string): string {
  return `${jobName}__${timestamp.replaceAll(':', '-')}__${fingerprint.slice(0, 8)}.tar.zst`;
}

/** What a stored name says: when it was taken, its fingerprint prefix, its counter; null for other names. */
export function parseSnapshotName(
  filename: string,
): { takenAt: number | null; fingerprint8: string; counter: number | null } | null {
  const match = STORED_NAME.exec(filename);
  if (!match) return null;
  const ms = Date.parse(`${match[1]}T${match[2]}:${match[3]}:${match[4]}Z`);
  return {
    takenAt: Number.isNaN(ms) ? null : ms,
    fingerprint8: match[5] ?? '',
    counter: match[6] === undefined ? null : Number(match[6]),
  };
}
