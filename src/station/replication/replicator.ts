import { pipeline, Readable } from 'node:stream';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { StationDb } from '../db/open.ts';
import { replicationCopies } from '../db/replication-tables.ts';
import type { Leases } from '../services/leases.ts';
import type { SnapshotIndex } from '../services/snapshot-index.ts';
import { timestampMs } from '../services/snapshot-time.ts';
import { jobPath, snapshotPath } from '../storage/layout.ts';
import type { CopyIn } from '../uploads/index.ts';
import type { ReplicationSettingsService } from './replication-settings.ts';
import type { SourceJob, StatusStore } from './replication-status.ts';
import { createSourceClient, type SourceClient } from './source-client.ts';
import type { SourceListing, SourceSnapshot } from './source-listing.ts';
import { createThrottle, type Throttle } from './throttle.ts';

const log = logger.child({ mod: 'station/replication' });

export const REPLICATION_LEASE = 'replication';
/** A replica that died mid-run frees the lease this soon (renewed every third of it while running). */
const LEASE_MS = 60_000;

/** A snapshot's path in the layout, from a row of this Station (the index, replication_copies). */
const keyOf = (s: { scoutId: string; scoutInstanceId: string; jobName: string; filename: string }) =>
  snapshotPath({ ...s, instanceId: s.scoutInstanceId });
const sourceKey = (s: SourceSnapshot) =>
  snapshotPath({
    scoutId: s.scout_id,
    instanceId: s.scout_instance_id,
    jobName: s.job_name,
    filename: s.filename,
  });

/**
 * The bytes [start, end] asked for in ranges of `step` bytes, one after the other. A limited
 * run reads slowly: a long answer would sit written but unread in the sockets' buffers until the
 * primary's keep-alive timeout (5 s) closes the connection under it. Small ranges are each read
 * to the end within seconds.
 */
async function* inRanges(
  client: SourceClient,
  snapshot: SourceSnapshot,
  start: number,
  end: number,
  step: number,
) {
  for (let at = start; at <= end; at += step) {
    const body = await client.piece(snapshot, at, Math.min(end, at + step - 1));
    for await (const chunk of body) yield chunk as Buffer;
  }
}

/** A download that broke off, said as such (the cause's own words are "terminated" and the like). */
function broken(snapshot: SourceSnapshot, error: unknown): Error {
  if (error instanceof AppError) return error;
  return new AppError(
    502,
    `the download of ${snapshot.filename} from the primary broke off: ${(error as Error).message}`,
  );
}

/** Breaks of one snapshot's download, in a row without the store keeping a byte, resumed within a run. */
const RESUMED_BREAKS = 3;

/**
 * Whether a download that broke off (the connection cut mid-answer: the network, a busy primary)
 * is asked again from where the store's bytes stopped, within the same run: never for the
 * store's own refusal or a primary that cannot be reached or refuses (AppErrors), nor in a
 * cancelled run, and at most RESUMED_BREAKS times in a row without progress.
 */
function mayResume(cause: unknown, breaks: number, signal: AbortSignal): boolean {
  return !(cause instanceof AppError) && breaks <= RESUMED_BREAKS && !signal.aborted;
}

/** What one run reports to the outside (notifications, hooks). */
export interface ReplicationEvents {
  failed(facts: { error: string; failed: number }): void;
  copied(facts: { copied: number; bytes: number }): void;
}

/** Each job of the listing with its newest and oldest snapshot on the primary. */
function jobsOf(listing: SourceListing): SourceJob[] {
  const jobs = new Map<string, SourceJob>();
  for (const s of listing.snapshots) {
    const key = jobPath({ scoutId: s.scout_id, instanceId: s.scout_instance_id, jobName: s.job_name });
    const at = timestampMs(s.timestamp);
    const job = jobs.get(key);
    if (!job) {
      jobs.set(key, {
        scout_id: s.scout_id,
        scout_instance_id: s.scout_instance_id,
        job_name: s.job_name,
        source_newest_ms: at,
        source_oldest_ms: at,
      });
    } else {
      job.source_newest_ms = Math.max(job.source_newest_ms, at);
      job.source_oldest_ms = Math.min(job.source_oldest_ms, at);
    }
  }
  return [...jobs.values()];
}

/**
 * One replication run on the replica: lists the primary's snapshots, registers the instances
 * they belong to (so recovery tokens can be minted here for them), and copies each snapshot
 * not copied before, piece by piece through the store's staging (copy-in.ts), resuming what an
 * earlier run left staged. A copy appears only complete and checked against the primary's
 * SHA-256. Snapshots the primary pruned are never removed here: only this Station's retention
 * removes copies, and a copy it pruned is not pulled again (replication_copies remembers it).
 */
export function createReplicator(deps: {
  db: StationDb;
  index: SnapshotIndex;
  copies: CopyIn;
  settings: ReplicationSettingsService;
  status: StatusStore;
  leases: Leases;
  clock: Clock;
  events: ReplicationEvents;
}) {
  async function copyOne(
    client: SourceClient,
    throttle: Throttle,
    snapshot: SourceSnapshot,
    signal: AbortSignal,
    onBytes: (n: number) => Promise<void>,
  ): Promise<void> {
    const source = {
      scoutId: snapshot.scout_id,
      instanceId: snapshot.scout_instance_id,
      jobName: snapshot.job_name,
      filename: snapshot.filename,
      sizeBytes: snapshot.size_bytes,
      sha256: snapshot.sha256,
      fingerprint: snapshot.fingerprint,
      keyFingerprint: snapshot.key_fingerprint,
      takenAt: timestampMs(snapshot.timestamp),
      storedAt: Date.parse(snapshot.stored_at),
    };
    const { session, next } = await deps.copies.open(source);
    const size = snapshot.size_bytes;
    const piece = deps.copies.pieceSize(size);
    let offset = next;
    if (offset > 0) log.info({ filename: snapshot.filename, offset, size }, 'resuming a copy');
    let breaks = 0;
    while (offset < size) {
      const end = Math.min(size, (Math.floor(offset / piece) + 1) * piece) - 1;
      const body = throttle.limited
        ? Readable.from(inRanges(client, snapshot, offset, end, throttle.rangeBytes))
        : await client.piece(snapshot, offset, end);
      const limited = throttle.stream();
      const stream: Readable = limited ? pipeline(body, limited, () => {}) : body;
      let reached: number;
      try {
        const appended = await deps.copies.append(session, offset, stream).catch(async (error: unknown) => {
          // What the store kept before the failure still counts (and is not fetched again).
          return { next: (await deps.copies.open(source)).next, interrupted: error };
        });
        reached = appended.next;
        await onBytes(reached - offset);
        if (appended.interrupted) {
          const error = broken(snapshot, appended.interrupted);
          // Counted from the last break after which the store kept bytes.
          breaks = reached > offset ? 1 : breaks + 1;
          if (!mayResume(appended.interrupted, breaks, signal)) throw error;
          log.warn(
            { filename: snapshot.filename, offset: reached, err: error },
            'download broke off; resuming',
          );
        } else if (reached <= offset) {
          throw new AppError(502, `the primary sent no bytes of ${snapshot.filename}`);
        }
      } finally {
        body.destroy();
      }
      offset = reached;
    }
    await deps.copies.complete(session, Date.parse(snapshot.stored_at));
  }

  async function remember(snapshot: SourceSnapshot): Promise<void> {
    await deps.db
      .insert(replicationCopies)
      .values({
        scoutId: snapshot.scout_id,
        scoutInstanceId: snapshot.scout_instance_id,
        jobName: snapshot.job_name,
        filename: snapshot.filename,
        sha256: snapshot.sha256,
        sizeBytes: snapshot.size_bytes,
        copiedAt: deps.clock.now(),
      })
      .onConflictDoNothing();
  }

  async function pass(signal: AbortSignal): Promise<{ copied: number; bytes: number; errors: string[] }> {
    const source = await deps.settings.source();
    if (!source)
      throw new AppError(409, 'replication is not set up: set replication_source_url and replication_token');
    const { replication_bytes_per_second } = await deps.settings.read();
    const client = createSourceClient(source.url, source.token, signal);
    const listing = await client.list();
    const now = deps.clock.now();
    for (const i of listing.instances) {
      await deps.index.touchInstance(
        i.scout_id,
        i.scout_instance_id,
        { keyFingerprint: i.key_fingerprint ?? undefined },
        now,
      );
    }
    await deps.status.update(() => ({ jobs: jobsOf(listing) }));
    const done = new Set((await deps.db.select().from(replicationCopies)).map(keyOf));
    const here = new Map((await deps.index.all()).map((row) => [keyOf(row), row]));
    const throttle = createThrottle(replication_bytes_per_second, deps.clock);
    const todo = listing.snapshots
      .filter((s) => !done.has(sourceKey(s)))
      .sort((a, b) => timestampMs(a.timestamp) - timestampMs(b.timestamp));
    let copied = 0;
    let bytes = 0;
    const errors: string[] = [];
    for (const snapshot of todo) {
      if (signal.aborted) break;
      const local = here.get(sourceKey(snapshot));
      if (local && !local.missing) {
        if (local.sha256 === snapshot.sha256) await remember(snapshot);
        else errors.push(`${snapshot.filename}: a different snapshot of that name is stored here`);
        continue;
      }
      try {
        await copyOne(client, throttle, snapshot, signal, async (n) => {
          bytes += n;
          await deps.status.update((s) => ({
            bytes_copied: s.bytes_copied + n,
            bytes_copied_total: s.bytes_copied_total + n,
          }));
        });
        await remember(snapshot);
        copied += 1;
        log.info({ filename: snapshot.filename, bytes: snapshot.size_bytes }, 'snapshot copied');
      } catch (error) {
        const message = (error as Error).message;
        errors.push(`${snapshot.filename}: ${message}`);
        log.warn({ filename: snapshot.filename, err: error }, 'copying a snapshot failed');
        if (signal.aborted) break;
      }
    }
    return { copied, bytes, errors };
  }

  /** One run under the lease; resolves when it ended (its outcome is in the status). */
  /** The start of a run, recorded before `queued` is answered (so a reader never sees the last run's bytes). */
  async function begin(): Promise<void> {
    await deps.status.update(() => ({ last_started_at: deps.clock.now(), bytes_copied: 0 }));
  }

  async function run(signal: AbortSignal): Promise<void> {
    let error: string | null = null;
    let failed = 0;
    try {
      const outcome = await pass(signal);
      failed = outcome.errors.length;
      if (failed > 0) {
        error = `${failed} snapshot${failed === 1 ? '' : 's'} not copied: ${outcome.errors.slice(0, 3).join('; ')}`;
      }
      if (outcome.copied > 0) deps.events.copied({ copied: outcome.copied, bytes: outcome.bytes });
      await deps.status.update((s) => ({ copied_total: s.copied_total + outcome.copied }));
    } catch (caught) {
      error = (caught as Error).message;
      failed = Math.max(failed, 1);
      log.warn({ err: caught }, 'replication run failed');
    }
    const finished = deps.clock.now();
    await deps.status.update((s) => ({
      last_finished_at: finished,
      last_error: error,
      ...(error === null ? { last_success_at: finished } : { failures_total: s.failures_total + failed }),
    }));
    if (error !== null) deps.events.failed({ error, failed });
  }

  /** This process's run, if any (the lease guards several processes; this, one process's callers). */
  let active: Promise<void> | null = null;

  return {
    /** Runs now under the lease unless a run holds it (this or another Station): `already_running`. */
    async start(signal: AbortSignal): Promise<{ status: 'queued' | 'already_running'; done: Promise<void> }> {
      await deps.leases.freeIfDead(REPLICATION_LEASE);
      if (active || (await deps.leases.holderOf(REPLICATION_LEASE)))
        return { status: 'already_running', done: Promise.resolve() };
      let answer: (value: boolean) => void = () => {};
      const taken = new Promise<boolean>((resolve) => {
        answer = resolve;
      });
      const done = deps.leases
        .exclusive(
          REPLICATION_LEASE,
          async () => {
            await begin();
            answer(true);
            await run(signal);
          },
          LEASE_MS,
        )
        .then((outcome) => {
          if (!outcome.ran) answer(false);
        })
        .catch((err: unknown) => {
          answer(false);
          log.error({ err }, 'replication run ended with an error');
        })
        .finally(() => {
          active = null;
        });
      active = done;
      return { status: (await taken) ? 'queued' : 'already_running', done };
    },
    /** Resolves when this process's run (if any) has ended. */
    settled: () => active ?? Promise.resolve(),
    running: async () => {
      await deps.leases.freeIfDead(REPLICATION_LEASE);
      return (await deps.leases.holderOf(REPLICATION_LEASE)) !== null;
    },
  };
}

export type Replicator = ReturnType<typeof createReplicator>;
