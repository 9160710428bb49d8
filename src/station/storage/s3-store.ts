import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListPartsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { clock } from '../../core/clock.ts';
import { AppError, notFound } from '../../core/errors.ts';
import type { S3Config } from '../../core/s3-config.ts';
import { isMissing, s3Client, unavailableStore } from './s3-client.ts';
import { s3Keys } from './s3-keys.ts';
import { deleteAll, listKeys, stagingAreas } from './s3-listing.ts';
import {
  appendParts,
  type MultipartState,
  newState,
  PARTS_PER_CHUNK,
  parseState,
  partSizeFor,
  sendTailPart,
  sha256Of,
  stagedBytesOf,
  tailFolder,
} from './s3-multipart.ts';
import { objectLock } from './s3-object-lock.ts';
import type {
  SnapshotKey,
  SnapshotStore,
  StagedUpload,
  StagingArea,
  StorageHealth,
  StoredFile,
} from './storage.ts';
import { SnapshotExists, StagingIncomplete } from './store-errors.ts';

export { s3Client } from './s3-client.ts';

/**
 * Snapshots in an S3-compatible bucket (STORAGE_URL=s3://…). An upload is a multipart upload
 * opened under its final key at initiation; chunks become parts, the database keeps the parts'
 * ETags and the SHA-256 state, and the object appears only when `complete` (after the caller
 * checked the SHA-256) completes it. Nothing touches the Station's disk.
 */
export function createS3Store(config: S3Config, client: S3Client = s3Client(config)): SnapshotStore {
  const Bucket = config.bucket;
  const keys = s3Keys(config.prefix);
  const where = { bucket: Bucket, prefix: config.prefix };
  const lock = config.objectLock ? objectLock(client, Bucket, config.objectLock) : null;

  /** The stored object as a snapshot, its version locked when S3_OBJECT_LOCK asks for it. */
  async function stored(key: string): Promise<StoredFile> {
    const stats = await head(key);
    if (!stats) throw new AppError(500, `the completed object ${key} is not in the bucket`);
    const lockedUntil = lock ? await lock.retain(key, clock.now()) : undefined;
    return { ...storedAs(key, stats), ...(lockedUntil ? { lockedUntil } : {}) };
  }

  async function head(key: string): Promise<{ sizeBytes: number; mtimeMs: number } | null> {
    try {
      const answer = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
      return { sizeBytes: answer.ContentLength ?? 0, mtimeMs: answer.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isMissing(error)) return null;
      throw unavailableStore(`HEAD ${key}`, error);
    }
  }

  async function openMultipart(key: string, partSize: number): Promise<MultipartState> {
    const answer = await client.send(
      new CreateMultipartUploadCommand({ Bucket, Key: key, ContentType: 'application/zstd' }),
    );
    if (!answer.UploadId) throw new Error(`the bucket answered no UploadId for ${key}`);
    return newState(key, answer.UploadId, partSize);
  }

  async function abort(key: string, multipartId: string): Promise<void> {
    try {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: multipartId }));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    await deleteAll(client, Bucket, tailFolder(config.prefix, multipartId));
  }

  /** Whether the multipart upload is still open (not completed, not aborted). */
  async function isOpen(state: MultipartState): Promise<boolean> {
    try {
      await client.send(
        new ListPartsCommand({ Bucket, Key: state.key, UploadId: state.multipartId, MaxParts: 1 }),
      );
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw unavailableStore(`LIST parts of ${state.key}`, error);
    }
  }

  async function completeMultipart(state: MultipartState, target: SnapshotKey, sizeBytes: number) {
    if (stagedBytesOf(state, sizeBytes) !== sizeBytes) {
      throw new StagingIncomplete(stagedBytesOf(state, sizeBytes));
    }
    // Completing would replace an object of the same name: refused, like a link on the disk.
    // (An object there while the upload is no longer open is this upload's, completed before.)
    if ((await head(state.key)) !== null && (await isOpen(state))) throw new SnapshotExists(target);
    try {
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key: state.key,
          UploadId: state.multipartId,
          MultipartUpload: { Parts: state.etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
        }),
      );
    } catch (error) {
      // Completed before (a Station stopped between the bucket's answer and the database).
      const there = isMissing(error) ? await head(state.key) : null;
      if (there?.sizeBytes !== sizeBytes) throw error;
    }
    if (state.tailed) await deleteAll(client, Bucket, tailFolder(config.prefix, state.multipartId));
  }

  function storedAs(key: string, stats: { sizeBytes: number; mtimeMs: number }): StoredFile {
    const parsed = keys.parse(key);
    if (!parsed) throw new Error(`stored object ${key} is outside the snapshot layout`);
    return { ...parsed, ...stats };
  }

  return {
    kind: 's3',

    async prepare() {
      let exists = true;
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
      } catch (error) {
        if (!isMissing(error)) throw unavailableStore(`HEAD bucket ${Bucket}`, error);
        exists = false;
      }
      if (exists) {
        await lock?.check();
        return;
      }
      const location =
        config.endpoint === undefined && config.region !== 'us-east-1'
          ? { CreateBucketConfiguration: { LocationConstraint: config.region as never } }
          : {};
      await client.send(
        new CreateBucketCommand({
          Bucket,
          ...location,
          ...(lock ? { ObjectLockEnabledForBucket: true } : {}),
        }),
      );
    },

    async health(): Promise<StorageHealth> {
      const base = { kind: 's3' as const, bucket: Bucket, free_bytes: null, total_bytes: null };
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
        return { ...base, writable: true };
      } catch (error) {
        const why = isMissing(error)
          ? 'the bucket does not exist'
          : `the bucket did not answer (${(error as Error).name})`;
        return { ...base, writable: false, problem: `s3://${Bucket}: ${why}` };
      }
    },

    /**
     * Chunks of PARTS_PER_CHUNK parts: within a chunk each whole part finishes in the bucket
     * while the next one arrives (s3-multipart.ts); at a chunk's end the Station waits for its
     * last part, then saves the state and answers.
     */
    chunkSizeFor: (archiveSizeBytes) => PARTS_PER_CHUNK * partSizeFor(archiveSizeBytes),
    partSizeFor,

    async beginStaging(upload) {
      const partSize = partSizeFor(upload.sizeBytes);
      return JSON.stringify(await openMultipart(keys.keyOf(upload.target), partSize));
    },

    async stagedBytes(upload) {
      return stagedBytesOf(parseState(upload.state), upload.sizeBytes);
    },

    async append(upload, offset, body) {
      const result = await appendParts(client, where, upload, offset, body);
      return {
        stagedBytes: result.stagedBytes,
        keptBytes: result.keptBytes,
        state: JSON.stringify(result.state),
      };
    },

    async stagedSha256(upload) {
      return sha256Of(parseState(upload.state));
    },

    async resetStaging(upload: StagedUpload): Promise<StagedUpload> {
      const state = parseState(upload.state);
      await abort(state.key, state.multipartId);
      return { ...upload, state: JSON.stringify(await openMultipart(state.key, state.partSize)) };
    },

    async abortStaging(area: StagingArea) {
      if (area.state === null) return;
      const state = parseState(area.state);
      if (state.key === '') await deleteAll(client, Bucket, tailFolder(config.prefix, state.multipartId));
      else await abort(state.key, state.multipartId);
    },

    async complete(upload) {
      const state = await sendTailPart(client, where, parseState(upload.state));
      await completeMultipart(state, upload.target, upload.sizeBytes);
      // Ceph answers CompleteMultipartUpload with an empty ETag; HEAD has the object as stored.
      return stored(state.key);
    },

    listStaging: () => stagingAreas(client, Bucket, keys),

    stat: (key) => head(keys.keyOf(key)),

    async exists(key) {
      return (await head(keys.keyOf(key))) !== null;
    },

    async read(key, range) {
      const Key = keys.keyOf(key);
      try {
        const answer = await client.send(
          new GetObjectCommand({
            Bucket,
            Key,
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        return answer.Body as Readable;
      } catch (error) {
        if (isMissing(error)) throw notFound(`snapshot ${key.filename} is not in the bucket`);
        throw unavailableStore(`GET ${Key}`, error);
      }
    },

    async remove(key) {
      const Key = keys.keyOf(key);
      if ((await head(Key)) === null) return false;
      if (lock) await lock.removeVersions(Key);
      else await client.send(new DeleteObjectCommand({ Bucket, Key }));
      return true;
    },

    async removeInstance(scoutId, instanceId) {
      await deleteAll(client, Bucket, keys.instanceFolder(scoutId, instanceId));
    },

    async *list() {
      for await (const object of listKeys(client, Bucket, keys.prefix)) {
        const key = keys.parse(object.key);
        if (key) yield { ...key, sizeBytes: object.sizeBytes, mtimeMs: object.mtimeMs };
      }
    },
  };
}
