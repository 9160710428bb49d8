import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { SnapshotKey, SnapshotStore } from './storage.ts';
import { SnapshotExists } from './store-errors.ts';

const TAKEN = 'the target already holds other bytes under this name (left as they are)';

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
 * Stores a whole snapshot read from `body` through `to`'s staging area (as an upload is): it
 * appears only complete and only when its SHA-256 is `sha256`, under `key` or not at all
 * (SnapshotExists when the name is taken). Returns null when stored, else what was wrong.
 */
export async function storeWhole(
  to: SnapshotStore,
  key: SnapshotKey,
  body: Readable,
  expected: { sizeBytes: number; sha256: string },
): Promise<string | null> {
  const { sizeBytes, sha256 } = expected;
  const opened = { uploadId: `whole-${randomBytes(8).toString('hex')}`, target: key, sizeBytes };
  let upload = { ...opened, state: await to.beginStaging(opened) };
  try {
    const appended = await to.append(upload, 0, body);
    upload = { ...upload, state: appended.state };
    const actual = appended.stagedBytes === sizeBytes ? await to.stagedSha256(upload) : null;
    const problem =
      actual === null
        ? `read ${appended.stagedBytes} of ${sizeBytes} bytes from the source`
        : actual !== sha256
          ? `checksum_mismatch: the source's SHA-256 is ${actual}, the index says ${sha256}`
          : null;
    if (problem === null) await to.complete(upload);
    else await to.abortStaging(upload);
    return problem;
  } catch (error) {
    await to.abortStaging(upload).catch(() => undefined);
    throw error;
  }
}

/**
 * Copies one snapshot between stores (move-storage), streaming, through the target's staging
 * area (storeWhole): it appears in the target only complete, under its own name, and only when
 * its SHA-256 matches the index. A name the target already holds with the same bytes is
 * skipped; with other bytes it fails (nothing is overwritten).
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
    return failed(TAKEN);
  }
  const source = await from.stat(key);
  if (!source) return failed('missing from the source store');
  if (source.sizeBytes !== sizeBytes) {
    return failed(`the source holds ${source.sizeBytes} bytes, the index says ${sizeBytes}`);
  }
  try {
    const problem = await storeWhole(to, key, await from.read(key), { sizeBytes, sha256 });
    return problem === null ? { status: 'copied', bytes: sizeBytes } : failed(problem);
  } catch (error) {
    if (error instanceof SnapshotExists) return failed(TAKEN);
    throw error;
  }
}
