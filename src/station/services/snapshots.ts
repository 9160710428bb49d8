import { clock } from '../../core/clock.ts';
import { conflict, notFound } from '../../core/errors.ts';
import type { OverviewScout, OverviewSnapshot } from '../../shared/protocol/overview.ts';
import type { InstanceDeleted, SnapshotDeleted, SnapshotProtected } from '../../shared/protocol/snapshots.ts';
import { checkComponent, checkFilename } from '../storage/keys.ts';
import type { SnapshotKey, SnapshotStore } from '../storage/storage.ts';
import { SnapshotLocked } from '../storage/store-errors.ts';
import type { JobKey, SnapshotIndex, SnapshotRow } from './snapshot-index.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A snapshot as the overview and a job's listing show it. */
export function snapshotView(row: SnapshotRow): OverviewSnapshot {
  return {
    name: row.filename,
    size_bytes: row.sizeBytes,
    mtime: iso(row.mtime),
    stored_at: iso(row.storedAt),
    fingerprint: row.fingerprint,
    protected: row.protected,
    locked_until: iso(row.lockedUntil),
    ...(row.unusual ? { unusual: true as const, unusual_reason: row.unusual } : {}),
    ...(row.missing ? { missing: true as const } : {}),
  };
}

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

export function checkJobRef(ref: JobKey): void {
  checkComponent('scout_id', ref.scoutId);
  checkComponent('scout_instance_id', ref.instanceId);
  checkComponent('job_name', ref.jobName);
}

/** Reading, downloading and deleting stored snapshots, and the overview tree. */
export function createSnapshots(deps: { index: SnapshotIndex; store: SnapshotStore }) {
  const { index, store } = deps;

  async function buildTree(): Promise<OverviewScout[]> {
    const [rows, instances] = await Promise.all([index.all(), index.instances()]);
    const scouts = new Map<string, Map<string, Map<string, SnapshotRow[]>>>();
    for (const inst of instances) {
      if (!scouts.has(inst.scoutId)) scouts.set(inst.scoutId, new Map());
      scouts.get(inst.scoutId)?.set(inst.scoutInstanceId, new Map());
    }
    for (const row of rows) {
      const byInstance = getOrAdd(scouts, row.scoutId, () => new Map());
      const byJob = getOrAdd(byInstance, row.scoutInstanceId, () => new Map<string, SnapshotRow[]>());
      getOrAdd(byJob, row.jobName, (): SnapshotRow[] => []).push(row);
    }
    const facts = new Map(instances.map((i) => [`${i.scoutId}/${i.scoutInstanceId}`, i]));
    return [...scouts].map(([scoutId, byInstance]) => ({
      scout_id: scoutId,
      instances: [...byInstance].map(([instanceId, byJob]) => {
        const fact = facts.get(`${scoutId}/${instanceId}`);
        return {
          scout_instance_id: instanceId,
          key_fingerprint: fact?.keyFingerprint ?? null,
          advertised_url: fact?.advertisedUrl ?? null,
          last_seen_at: iso(fact?.lastSeenAt ?? null),
          jobs: [...byJob].map(([jobName, list]) => ({
            job_name: jobName,
            snapshots: list.map(snapshotView),
          })),
        };
      }),
    }));
  }

  let cached: { version: string; tree: OverviewScout[] } | null = null;

  return {
    /**
     * `scouts[].instances[].jobs[].snapshots[]`, oldest snapshot first. Rebuilt only when the
     * index version moved: reading 10,000 rows from PGlite costs ~100 ms, the version check ~1 ms.
     */
    async tree() {
      const version = await index.version();
      if (cached?.version === version) return cached.tree;
      const tree = await buildTree();
      cached = { version, tree };
      return tree;
    },

    totals: () => index.totals(),

    /** A file to send: an indexed snapshot, or a legacy-layout file found on disk. */
    async locate(key: SnapshotKey): Promise<{ key: SnapshotKey; sizeBytes: number }> {
      checkFilename(key.filename);
      const stats = await store.stat(key);
      if (!stats) throw notFound(`snapshot ${key.filename} not found`);
      return { key, sizeBytes: stats.sizeBytes };
    },

    /** Protects a snapshot from retention and deletion (`value` true), or lifts that. */
    async protect(key: SnapshotKey, value: boolean): Promise<SnapshotProtected> {
      checkFilename(key.filename);
      const ref = { scoutId: key.scoutId, instanceId: key.instanceId ?? '', jobName: key.jobName };
      if (key.instanceId === null || !(await index.setProtected(ref, key.filename, value)))
        throw notFound(`snapshot ${key.filename} not found`);
      return { filename: key.filename, protected: value };
    },

    async remove(key: SnapshotKey, now: number): Promise<SnapshotDeleted> {
      checkFilename(key.filename);
      if (key.instanceId !== null) {
        const row = await index.byName(
          { scoutId: key.scoutId, instanceId: key.instanceId, jobName: key.jobName },
          key.filename,
        );
        if (row?.protected)
          throw conflict(`snapshot ${key.filename} is protected; unprotect it first`, 'protected');
        if (row?.lockedUntil && row.lockedUntil > now)
          throw conflict(
            {
              message: `snapshot ${key.filename} is under object lock until ${iso(row.lockedUntil)}`,
              locked_until: iso(row.lockedUntil),
            },
            'locked',
          );
      }
      const removedFile = await store.remove(key).catch((error: unknown) => {
        throw error instanceof SnapshotLocked ? conflict(error.message, 'locked') : error;
      });
      const removedRow =
        key.instanceId !== null
          ? await index.remove(
              { scoutId: key.scoutId, instanceId: key.instanceId, jobName: key.jobName },
              key.filename,
            )
          : false;
      if (!removedFile && !removedRow) throw notFound(`snapshot ${key.filename} not found`);
      return { status: 'deleted', filename: key.filename };
    },

    /** Deletes every snapshot and index row of an instance; its Station token stays valid. */
    async removeInstance(
      scoutId: string,
      instanceId: string,
      cleanupMissing: boolean,
    ): Promise<InstanceDeleted> {
      checkComponent('scout_id', scoutId);
      checkComponent('scout_instance_id', instanceId);
      const rows = await index.ofInstance(scoutId, instanceId);
      const known = await index.instance(scoutId, instanceId);
      let onDisk = 0;
      let missing = 0;
      for (const row of rows) {
        const stats = await store.stat({ scoutId, instanceId, jobName: row.jobName, filename: row.filename });
        if (stats) onDisk += 1;
        else missing += 1;
      }
      if (!known && rows.length === 0) throw notFound(`no instance ${scoutId}/${instanceId}`);
      const guarded = rows.filter((row) => row.protected || (row.lockedUntil ?? 0) > clock.now()).length;
      if (guarded > 0)
        throw conflict(
          `${guarded} snapshots of ${scoutId}/${instanceId} are protected or under object lock; unprotect them (or wait for the lock) first`,
          'protected',
        );
      if (missing > 0 && !cleanupMissing) {
        throw conflict({
          message: `${missing} indexed snapshot files of ${scoutId}/${instanceId} are missing on disk; repeat with cleanup_missing=true to remove their records too`,
          cleanup_available: true,
        });
      }
      await store.removeInstance(scoutId, instanceId);
      const removedRows = await index.removeInstance(scoutId, instanceId);
      return {
        status: 'deleted',
        scout_id: scoutId,
        scout_instance_id: instanceId,
        deleted_files: onDisk,
        removed_records: removedRows,
      };
    },
  };
}

export type Snapshots = ReturnType<typeof createSnapshots>;
