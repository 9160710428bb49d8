import {
  DeleteObjectCommand,
  GetObjectLockConfigurationCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectRetentionCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { DAY_MS } from '../../core/clock.ts';
import { ConfigError } from '../../core/config.ts';
import type { ObjectLock } from '../../core/s3-config.ts';
import { SnapshotLocked } from './store-errors.ts';

/**
 * S3 Object Lock (S3_OBJECT_LOCK): the bucket must have it enabled; each stored snapshot's
 * object version gets a retention date; deleting a snapshot deletes its versions (a plain
 * DELETE on a versioned bucket only hides the object behind a delete marker).
 */
export function objectLock(client: S3Client, Bucket: string, lock: ObjectLock) {
  return {
    /** Start-up: refuses, in one line, a bucket without object lock. */
    async check(): Promise<void> {
      let enabled = false;
      try {
        const answer = await client.send(new GetObjectLockConfigurationCommand({ Bucket }));
        enabled = answer.ObjectLockConfiguration?.ObjectLockEnabled === 'Enabled';
      } catch (error) {
        // No configuration at all: AWS and Ceph answer 404 ObjectLockConfigurationNotFoundError.
        if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404)
          throw error;
      }
      if (!enabled) {
        throw new ConfigError(
          `S3_OBJECT_LOCK=${lock.mode.toLowerCase()} but bucket ${Bucket} has no object lock: create a new bucket with object lock enabled (docs/operators-guide.md, "S3 Object Lock") or unset S3_OBJECT_LOCK`,
        );
      }
    },

    /**
     * Sets the completed object's retention to `storedAt` + S3_OBJECT_LOCK_DAYS, on its version
     * (Ceph ignores retention given when the multipart upload is created). Returns the date (ms).
     */
    async retain(Key: string, storedAt: number): Promise<number> {
      const until = storedAt + lock.days * DAY_MS;
      const head = await client.send(new HeadObjectCommand({ Bucket, Key }));
      await client.send(
        new PutObjectRetentionCommand({
          Bucket,
          Key,
          ...(head.VersionId ? { VersionId: head.VersionId } : {}),
          Retention: { Mode: lock.mode, RetainUntilDate: new Date(until) },
        }),
      );
      return until;
    },

    /** Deletes every version of `Key`; a version the bucket still locks is SnapshotLocked. */
    async removeVersions(Key: string): Promise<void> {
      const answer = await client.send(new ListObjectVersionsCommand({ Bucket, Prefix: Key }));
      const versions = [...(answer.Versions ?? []), ...(answer.DeleteMarkers ?? [])].filter(
        (v) => v.Key === Key,
      );
      for (const version of versions) {
        try {
          await client.send(new DeleteObjectCommand({ Bucket, Key, VersionId: version.VersionId }));
        } catch (error) {
          const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          if (status === 403 || (error as Error).name === 'AccessDenied') {
            throw new SnapshotLocked(Key);
          }
          throw error;
        }
      }
    },
  };
}

export type ObjectLocking = ReturnType<typeof objectLock>;
