/**
 * The header every snapshot download carries with the snapshot's file name. The Station sends
 * both names for one release: `X-Relay-Snapshot-Filename` is the name the original protocol
 * gave it (another product's), kept so older Scouts and scripts still read it; clients read
 * the new name first and fall back to the old one (an older Station sends only that).
 */
export const SNAPSHOT_FILENAME_HEADER = 'X-Backupd-Snapshot-Filename';
/** @deprecated Sent beside SNAPSHOT_FILENAME_HEADER until the next release; read it only as a fallback. */
export const LEGACY_SNAPSHOT_FILENAME_HEADER = 'X-Relay-Snapshot-Filename';

/** The snapshot file name a download answer names, from either header. */
export function snapshotFilenameOf(headers: Headers): string | null {
  return headers.get(SNAPSHOT_FILENAME_HEADER) ?? headers.get(LEGACY_SNAPSHOT_FILENAME_HEADER);
}

/** Every answer's request id (both roles); the server log has the request under it. */
export const REQUEST_ID_HEADER = 'X-Request-Id';
