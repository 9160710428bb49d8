import { createHash, randomBytes } from 'node:crypto';
import type { SnapshotKey, SnapshotStore } from './storage.ts';

/** A snapshot as the index knows it: where it is, how big, its SHA-256. */
export interface IndexedSnapshot {
  key: SnapshotKey;
  sizeBytes: number;
  sha256: string;
}

export type CopyOutcome =
  | { status: 'copied' | 'already_there'; bytes: number }
  | { status: 'failed'; bytes: number; problem: string };

async function sha256Of(store: SnapshotStore, key: SnapshotKey): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await store.read(key)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Copies one snapshot between stores (move-storage), streaming, through the target's staging
 * area: it appears in the target only complete and only when its SHA-256 matches the index.
 * A name the target already holds with the same bytes is skipped; with other bytes it fails
 * (nothing is overwritten).
 */
export async function copySnapshot(
  from: SnapshotStore,
  to: SnapshotStore,
  snapshot: IndexedSnapshot,
): Promise<CopyOutcome> {
  const { key, sizeBytes, sha256 } = snapshot;
  const failed = (problem: string): CopyOutcome => ({ status: 'failed', bytes: 0, problem });
  const there = await to.stat(key);
  if (there) {
    if (there.sizeBytes === sizeBytes && (await sha256Of(to, key)) === sha256) {
      return { status: 'already_there', bytes: sizeBytes };
    }
    return failed('the target already holds other bytes under this name (left as they are)');
  }
  const source = await from.stat(key);
  if (!source) return failed('missing from the source store');
  if (source.sizeBytes !== sizeBytes) {
    return failed(`the source holds ${source.sizeBytes} bytes, the index says ${sizeBytes}`);
  }

  const opened = { uploadId: `move-${randomBytes(8).toString('hex')}`, target: key, sizeBytes };
  let upload = { ...opened, state: await to.beginStaging(opened) };
  try {
    const appended = await to.append(upload, 0, await from.read(key));
    upload = { ...upload, state: appended.state };
    if (appended.stagedBytes !== sizeBytes) {
      await to.abortStaging(upload);
      return failed(`read ${appended.stagedBytes} of ${sizeBytes} bytes from the source`);
    }
    const actual = await to.stagedSha256(upload);
    if (actual !== sha256) {
      await to.abortStaging(upload);
      return failed(`checksum_mismatch: the source's SHA-256 is ${actual}, the index says ${sha256}`);
    }
  } catch (error) {
    await to.abortStaging(upload).catch(() => undefined);
    throw error;
  }
  const stored = await to.complete(upload);
  if (stored.filename !== key.filename) {
    // The name was taken between the check and now: do not leave a copy under another name.
    await to.remove(stored);
    return failed(`the name was taken in the target meanwhile (stored as ${stored.filename}, removed)`);
  }
  return { status: 'copied', bytes: sizeBytes };
}
