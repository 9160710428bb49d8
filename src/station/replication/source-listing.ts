import { z } from 'zod';
import { stationPaths } from '../../shared/protocol/api-paths.ts';
import { utcSecond } from '../../shared/protocol/fields.ts';
import type { InstanceRow, SnapshotRow } from '../services/snapshot-index.ts';

/** Where a primary answers its replicas (scope `replicate`, src/station/routes/replication-source.ts). */
export const SOURCE_PATHS = {
  listing: stationPaths.replicationSource,
  snapshot: (s: { scout_id: string; scout_instance_id: string; job_name: string; filename: string }) =>
    stationPaths.replicationSourceSnapshot(
      { scoutId: s.scout_id, instanceId: s.scout_instance_id, jobName: s.job_name },
      s.filename,
    ),
};

const SourceSnapshot = z.object({
  scout_id: z.string(),
  scout_instance_id: z.string(),
  job_name: z.string(),
  filename: z.string(),
  size_bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  fingerprint: z.string(),
  key_fingerprint: z.string().nullable(),
  timestamp: z.string(),
  stored_at: z.string(),
});

const SourceInstance = z.object({
  scout_id: z.string(),
  scout_instance_id: z.string(),
  key_fingerprint: z.string().nullable(),
});

/** `GET /api/replication/source`: every stored snapshot of every instance, and the instances. */
export const SourceListing = z.object({
  instances: z.array(SourceInstance),
  snapshots: z.array(SourceSnapshot),
});

export type SourceListing = z.infer<typeof SourceListing>;
export type SourceSnapshot = z.infer<typeof SourceSnapshot>;

/** The listing as the primary answers it: present snapshots of the instance layout only. */
export function sourceListing(instances: InstanceRow[], rows: SnapshotRow[]): SourceListing {
  return {
    instances: instances.map((i) => ({
      scout_id: i.scoutId,
      scout_instance_id: i.scoutInstanceId,
      key_fingerprint: i.keyFingerprint,
    })),
    snapshots: rows
      .filter((row) => !row.missing && row.scoutInstanceId !== '')
      .map((row) => ({
        scout_id: row.scoutId,
        scout_instance_id: row.scoutInstanceId,
        job_name: row.jobName,
        filename: row.filename,
        size_bytes: row.sizeBytes,
        sha256: row.sha256,
        fingerprint: row.fingerprint,
        key_fingerprint: row.keyFingerprint,
        timestamp: utcSecond(row.takenAt),
        stored_at: new Date(row.storedAt).toISOString(),
      })),
  };
}
