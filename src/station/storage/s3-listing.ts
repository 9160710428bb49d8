import {
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { S3Keys } from './s3-keys.ts';
import { newState } from './s3-multipart.ts';
import type { StagingArea } from './storage.ts';

/** Every object under `Prefix`, a page of 1000 per request. */
export async function* listKeys(
  client: S3Client,
  Bucket: string,
  Prefix: string,
): AsyncGenerator<{ key: string; sizeBytes: number; mtimeMs: number }> {
  let ContinuationToken: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }));
    for (const object of page.Contents ?? []) {
      if (object.Key) {
        yield { key: object.Key, sizeBytes: object.Size ?? 0, mtimeMs: object.LastModified?.getTime() ?? 0 };
      }
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken !== undefined);
}

/** Deletes every object under `Prefix`, 1000 per request. */
export async function deleteAll(client: S3Client, Bucket: string, Prefix: string): Promise<void> {
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const Objects = batch.map((Key) => ({ Key }));
    const answer = await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects, Quiet: true } }));
    const failed = answer.Errors ?? [];
    if (failed.length > 0)
      throw new Error(`could not delete ${failed.length} objects under ${Prefix}: ${failed[0]?.Code}`);
    batch = [];
  };
  for await (const object of listKeys(client, Bucket, Prefix)) {
    batch.push(object.key);
    if (batch.length === 1000) await flush();
  }
  await flush();
}

/**
 * The bucket's staging areas: multipart uploads of snapshot keys under the prefix, then the tail
 * objects (`.staging/`) of multipart uploads that are gone (a Station stopped between ending one
 * and removing its tails).
 */
export async function* stagingAreas(
  client: S3Client,
  Bucket: string,
  keys: S3Keys,
): AsyncGenerator<StagingArea & { startedMs: number | null }> {
  const open = new Set<string>();
  let KeyMarker: string | undefined;
  let UploadIdMarker: string | undefined;
  do {
    const page = await client.send(
      new ListMultipartUploadsCommand({ Bucket, Prefix: keys.prefix, KeyMarker, UploadIdMarker }),
    );
    for (const item of page.Uploads ?? []) {
      if (!item.Key || !item.UploadId) continue;
      // Only keys of the snapshot layout are ours: other software's multipart uploads under
      // the same prefix are neither listed nor ever aborted (issue #23 item 10).
      const target = keys.parse(item.Key);
      if (!target) continue;
      open.add(item.UploadId);
      const state = newState(item.Key, item.UploadId, 0);
      yield {
        uploadId: null,
        target,
        state: JSON.stringify(state),
        startedMs: item.Initiated?.getTime() ?? null,
      };
    }
    KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
    UploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
  } while (KeyMarker !== undefined);
  // Tail objects of a multipart upload that is gone (a Station stopped between the two).
  const tails = new Map<string, number>();
  for await (const object of listKeys(client, Bucket, `${keys.prefix}.staging/`)) {
    const id = decodeURIComponent(
      object.key.slice(keys.prefix.length + '.staging/'.length).split('/')[0] ?? '',
    );
    if (!open.has(id)) tails.set(id, Math.max(tails.get(id) ?? 0, object.mtimeMs));
  }
  for (const [id, latest] of tails) {
    yield { uploadId: null, target: null, state: JSON.stringify(newState('', id, 0)), startedMs: latest };
  }
}
