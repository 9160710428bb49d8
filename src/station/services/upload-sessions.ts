import { open, rm, stat, statfs, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { and, eq, inArray, lt, ne } from 'drizzle-orm';
import { newId } from '../../core/auth/secrets.ts';
import { clock, DAY_MS } from '../../core/clock.ts';
import {
  AppError,
  badRequest,
  conflict,
  forbidden,
  notFound,
  payloadTooLarge,
  unavailable,
} from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { UploadAcceptance } from '../../core/settings/upload-acceptance.ts';
import type { StationDb } from '../db/open.ts';
import { uploadSessions } from '../db/station-tables.ts';
import type { SnapshotStore } from '../storage/snapshot-store.ts';
import { sha256File } from './file-hash.ts';
import { createKeyedMutex } from './keyed-mutex.ts';
import type { SnapshotIndex } from './snapshot-index.ts';
import { unusualReason } from './snapshot-index.ts';
import { checkNotAhead, timestampMs } from './snapshot-time.ts';
import type { StationSettingsService } from './station-settings.ts';
import type { StationTokenRow, StationTokens } from './station-tokens.ts';
import { probeWritable } from './storage-health.ts';

const log = logger.child({ mod: 'station/uploads' });

export const RECOMMENDED_CHUNK_BYTES = 16 * 1024 * 1024;
/** An upload that received no bytes this long is abandoned: its staged bytes are removed. */
export const ABANDONED_AFTER_MS = DAY_MS;
/**
 * A session's declared size is held for it only while bytes arrive: one that received nothing
 * this long stops holding space (it can still resume until it is abandoned).
 */
export const RESERVATION_IDLE_MS = 60 * 60 * 1000;
/** Finished sessions are kept this long so a retried initiation still finds its result. */
const STORED_KEPT_MS = 7 * DAY_MS;

export interface InitiateBody {
  scout_id: string;
  scout_instance_id: string;
  job_name: string;
  fingerprint: string;
  timestamp: string;
  archive_format: 'tar.zst';
  archive_size_bytes: number;
  archive_sha256: string;
  idempotency_key: string;
  encryption_key_fingerprint?: string | undefined;
  advertised_url?: string | undefined;
}

type SessionRow = typeof uploadSessions.$inferSelect;

export type UploadFacts = Record<string, string | number>;

/** What finalize tells the rest of the Station: hooks run around it, notifications follow it. */
export interface UploadEvents {
  beforeStore(facts: UploadFacts): Promise<void>;
  stored(facts: UploadFacts): void;
  failed(facts: UploadFacts, reason: string): void;
}

/** `<job>__<YYYY-MM-DDTHH-MM-SSZ>__<fp8>.tar.zst` */
export function snapshotFileName(jobName: string, timestamp: string, fingerprint: string): string {
  return `${jobName}__${timestamp.replaceAll(':', '-')}__${fingerprint.slice(0, 8)}.tar.zst`;
}

export function createUploads(deps: {
  db: StationDb;
  stagingDir: string;
  backupRoot: string;
  maxUploadBytes: number;
  tokens: StationTokens;
  index: SnapshotIndex;
  store: SnapshotStore;
  settings: StationSettingsService;
  acceptance: UploadAcceptance;
  events?: UploadEvents;
}) {
  const { db, stagingDir, index, store } = deps;
  const withLock = createKeyedMutex();
  const stagedPath = (uploadId: string) => join(stagingDir, `${uploadId}.part`);
  let lastSweep = 0;

  async function stagedSize(uploadId: string): Promise<number> {
    try {
      return (await stat(stagedPath(uploadId))).size;
    } catch {
      return 0;
    }
  }

  async function session(uploadId: string, token: StationTokenRow): Promise<SessionRow> {
    const [row] = await db.select().from(uploadSessions).where(eq(uploadSessions.uploadId, uploadId));
    if (!row) throw notFound(`no upload session ${uploadId}; initiate the upload again`);
    if (row.tokenHash !== token.tokenHash)
      throw forbidden('this upload session belongs to another Station token');
    return row;
  }

  function storedReply(row: SessionRow, duplicate: boolean) {
    return {
      upload_id: row.uploadId,
      status: 'stored',
      next_offset: row.archiveSizeBytes,
      archive_size_bytes: row.archiveSizeBytes,
      recommended_chunk_size_bytes: RECOMMENDED_CHUNK_BYTES,
      pruned: [] as string[],
      duplicate,
      stored_as: row.storedAs,
    };
  }

  async function progressReply(row: SessionRow) {
    const next = await stagedSize(row.uploadId);
    return {
      upload_id: row.uploadId,
      status: next >= row.archiveSizeBytes ? 'complete' : 'receiving',
      next_offset: next,
      archive_size_bytes: row.archiveSizeBytes,
      recommended_chunk_size_bytes: RECOMMENDED_CHUNK_BYTES,
      pruned: [] as string[],
      duplicate: false,
    };
  }

  /** Unfinished sessions of one Scout instance and job. */
  function liveSessionsOf(ref: { scoutId: string; instanceId: string; jobName: string }) {
    return db
      .select()
      .from(uploadSessions)
      .where(
        and(
          ne(uploadSessions.status, 'stored'),
          eq(uploadSessions.scoutId, ref.scoutId),
          eq(uploadSessions.scoutInstanceId, ref.instanceId),
          eq(uploadSessions.jobName, ref.jobName),
        ),
      );
  }

  /**
   * Space held for uploads: the bytes still to arrive of every unfinished session that received
   * bytes within RESERVATION_IDLE_MS, split into the asking token's and everyone else's.
   * Sessions about to be superseded (`ignore`) hold nothing.
   */
  async function reservedBytes(token: string, ignore: ReadonlySet<string>) {
    const live = await db.select().from(uploadSessions).where(ne(uploadSessions.status, 'stored'));
    const since = clock.now() - RESERVATION_IDLE_MS;
    const reserved = { own: 0, ownUploads: 0, others: 0 };
    for (const row of live) {
      if (ignore.has(row.uploadId) || row.updatedAt < since) continue;
      const bytes = Math.max(0, row.archiveSizeBytes - (await stagedSize(row.uploadId)));
      if (row.tokenHash === token) {
        reserved.own += bytes;
        reserved.ownUploads += 1;
      } else reserved.others += bytes;
    }
    return reserved;
  }

  /**
   * Refuses an upload that cannot fit. What one token may hold is bounded three ways: one
   * live session per instance and job (a new one supersedes the old, see `supersede`), a
   * reservation lapses when its bytes stop arriving (RESERVATION_IDLE_MS), and a token's own
   * unfinished uploads count against it first, so the detail says whose reservation is in the way.
   */
  async function checkSpace(token: string, size: number, ignore: ReadonlySet<string>): Promise<void> {
    let free: number;
    let rootFree: number;
    let sameDevice: boolean;
    try {
      const [staging, root, stagingStat, rootStat] = await Promise.all([
        statfs(stagingDir),
        statfs(deps.backupRoot),
        stat(stagingDir),
        stat(deps.backupRoot),
      ]);
      free = staging.bavail * staging.bsize;
      rootFree = root.bavail * root.bsize;
      sameDevice = stagingStat.dev === rootStat.dev;
    } catch (cause) {
      throw new AppError(507, 'could not check free disk space for staging', { cause });
    }
    const reserved = await reservedBytes(token, ignore);
    if (free < size + reserved.others) {
      throw new AppError(
        507,
        `not enough staging space: ${size} bytes declared, ${free} free, ${reserved.others} reserved by uploads of other Station tokens (a reservation lapses after ${RESERVATION_IDLE_MS / 60_000} minutes without bytes); try again later`,
      );
    }
    if (free < size + reserved.own + reserved.others) {
      throw new AppError(
        507,
        `not enough staging space: ${size} bytes declared, ${free} free, ${reserved.own} reserved by ${reserved.ownUploads} other unfinished upload(s) of this Station token; finish them first or let them lapse (${RESERVATION_IDLE_MS / 60_000} minutes without bytes)`,
      );
    }
    if (!sameDevice && rootFree < size) {
      throw new AppError(507, `not enough space in BACKUP_ROOT: ${size} bytes declared, ${rootFree} free`);
    }
  }

  async function sweep(): Promise<void> {
    const now = clock.now();
    const abandoned = await db
      .delete(uploadSessions)
      .where(and(ne(uploadSessions.status, 'stored'), lt(uploadSessions.updatedAt, now - ABANDONED_AFTER_MS)))
      .returning({ uploadId: uploadSessions.uploadId });
    for (const { uploadId } of abandoned) await rm(stagedPath(uploadId), { force: true });
    await db
      .delete(uploadSessions)
      .where(and(eq(uploadSessions.status, 'stored'), lt(uploadSessions.updatedAt, now - STORED_KEPT_MS)));
    if (abandoned.length > 0) log.info({ count: abandoned.length }, 'removed abandoned uploads');
    lastSweep = now;
  }

  /**
   * One live session per instance and job: once a new upload of theirs exists, the older
   * unfinished ones (`candidates`, read before it was made) are aborted and their staged bytes
   * removed. Older means (createdAt, uploadId) below the new session's, so two racing
   * initiations never abort each other (both may stay until the job's next initiation).
   * A chunk in flight finishes before its file goes.
   */
  async function supersede(candidates: SessionRow[], kept: SessionRow): Promise<void> {
    const older = candidates.filter(
      (row) =>
        row.uploadId !== kept.uploadId &&
        (row.createdAt < kept.createdAt ||
          (row.createdAt === kept.createdAt && row.uploadId < kept.uploadId)),
    );
    if (older.length === 0) return;
    const removed = await db
      .delete(uploadSessions)
      .where(
        and(
          ne(uploadSessions.status, 'stored'),
          inArray(
            uploadSessions.uploadId,
            older.map((row) => row.uploadId),
          ),
        ),
      )
      .returning({ uploadId: uploadSessions.uploadId });
    for (const { uploadId } of removed) {
      await withLock(uploadId, () => rm(stagedPath(uploadId), { force: true }));
    }
    if (removed.length > 0) {
      log.info(
        {
          scout_id: kept.scoutId,
          scout_instance_id: kept.scoutInstanceId,
          job_name: kept.jobName,
          count: removed.length,
        },
        'superseded unfinished uploads of the job',
      );
    }
  }

  async function markStored(row: SessionRow, storedAs: string): Promise<SessionRow> {
    const [updated] = await db
      .update(uploadSessions)
      .set({ status: 'stored', storedAs, updatedAt: clock.now() })
      .where(eq(uploadSessions.uploadId, row.uploadId))
      .returning();
    await rm(stagedPath(row.uploadId), { force: true });
    return updated ?? { ...row, status: 'stored', storedAs };
  }

  return {
    sweep,
    stagedPath,

    async initiate(token: StationTokenRow, body: InitiateBody) {
      checkNotAhead(body.timestamp);
      if (await deps.acceptance.paused())
        throw unavailable('uploads are paused on this Station; try again later');
      if (body.archive_size_bytes > deps.maxUploadBytes) {
        throw payloadTooLarge(
          `archive_size_bytes ${body.archive_size_bytes} exceeds this Station's limit of ${deps.maxUploadBytes} bytes`,
        );
      }
      for (const dir of [deps.backupRoot, stagingDir]) {
        const problem = await probeWritable(dir);
        if (problem) throw unavailable(`storage unavailable: ${problem}`);
      }
      if (clock.now() - lastSweep > 60_000) await sweep();
      const ref = { scoutId: body.scout_id, instanceId: body.scout_instance_id, jobName: body.job_name };

      const [existing] = await db
        .select()
        .from(uploadSessions)
        .where(eq(uploadSessions.idempotencyKey, body.idempotency_key));
      if (existing) {
        const differs =
          existing.archiveSha256 !== body.archive_sha256
            ? 'archive_sha256'
            : existing.archiveSizeBytes !== body.archive_size_bytes
              ? 'archive_size_bytes'
              : existing.scoutId !== body.scout_id ||
                  existing.scoutInstanceId !== body.scout_instance_id ||
                  existing.jobName !== body.job_name
                ? 'scout_id/scout_instance_id/job_name'
                : null;
        if (differs) {
          throw conflict(
            `idempotency_key was already used for an upload with another ${differs}; use a new key`,
          );
        }
      }
      // A new upload that cannot fit is refused before it claims the instance for the token.
      const duplicate = existing
        ? undefined
        : await index.bySha(ref, body.archive_sha256, body.archive_size_bytes);
      // Older unfinished sessions of this instance and job give way to a new upload (after the
      // binding below has accepted this token for the instance); their space is not counted.
      const superseded = existing ? [] : await liveSessionsOf(ref);
      if (!existing && !duplicate) {
        const ignore = new Set(superseded.map((row) => row.uploadId));
        await checkSpace(token.tokenHash, body.archive_size_bytes, ignore);
      }
      await deps.tokens.bind(token, body.scout_id, body.scout_instance_id);
      const now = clock.now();
      await index.touchInstance(
        body.scout_id,
        body.scout_instance_id,
        { keyFingerprint: body.encryption_key_fingerprint, advertisedUrl: body.advertised_url },
        now,
      );

      if (existing) {
        // A newer token of the same instance takes the session over. Resuming does not make
        // the session younger: only received bytes do.
        if (existing.tokenHash !== token.tokenHash) {
          await db
            .update(uploadSessions)
            .set({ tokenHash: token.tokenHash })
            .where(eq(uploadSessions.uploadId, existing.uploadId));
        }
        if (existing.status === 'stored') return storedReply(existing, false);
        const stored = await index.bySha(ref, body.archive_sha256, body.archive_size_bytes);
        if (stored) return storedReply(await markStored(existing, stored.filename), true);
        return progressReply({ ...existing, tokenHash: token.tokenHash });
      }

      const row: SessionRow = {
        uploadId: newId(),
        idempotencyKey: body.idempotency_key,
        tokenHash: token.tokenHash,
        scoutId: body.scout_id,
        scoutInstanceId: body.scout_instance_id,
        jobName: body.job_name,
        fingerprint: body.fingerprint,
        timestamp: body.timestamp,
        archiveSizeBytes: body.archive_size_bytes,
        archiveSha256: body.archive_sha256,
        keyFingerprint: body.encryption_key_fingerprint ?? null,
        status: duplicate ? 'stored' : 'receiving',
        storedAs: duplicate?.filename ?? null,
        createdAt: now,
        updatedAt: now,
      };
      const [inserted] = await db.insert(uploadSessions).values(row).onConflictDoNothing().returning();
      if (!inserted) throw conflict('idempotency_key is being initiated by another request; retry');
      await supersede(superseded, inserted);
      if (duplicate) return storedReply(inserted, true);
      const handle = await open(stagedPath(row.uploadId), 'a');
      await handle.close();
      return progressReply(inserted);
    },

    async chunk(token: StationTokenRow, uploadId: string, offset: number, body: Readable) {
      return withLock(uploadId, async () => {
        const row = await session(uploadId, token);
        if (row.status === 'stored') {
          throw conflict({
            status: 'stored',
            next_offset: row.archiveSizeBytes,
            message: 'upload already stored',
          });
        }
        const path = stagedPath(uploadId);
        const next = await stagedSize(uploadId);
        if (offset !== next) {
          throw conflict({
            status: 'offset_mismatch',
            next_offset: next,
            message: `chunk offset ${offset} does not match the ${next} bytes received; resume from next_offset`,
          });
        }
        const room = row.archiveSizeBytes - next;
        let received = 0;
        const limit = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            received += chunk.length;
            if (received > room)
              done(badRequest(`chunk runs past archive_size_bytes (${row.archiveSizeBytes})`));
            else done(null, chunk);
          },
        });
        const handle = await open(path, 'a');
        try {
          // No fsync per chunk: next_offset is the file's length, and finalize checks the SHA-256.
          await pipeline(body, limit, handle.createWriteStream({ highWaterMark: 1024 * 1024 }));
        } catch (error) {
          // A rejected chunk leaves no trace; an interrupted one keeps what arrived.
          if (error instanceof AppError) {
            await truncate(path, next);
            throw error;
          }
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
            throw new AppError(
              507,
              'the staging disk is full; the bytes received so far are kept, resume from next_offset once space is free',
            );
          }
          log.warn({ upload_id: uploadId, err: error }, 'chunk interrupted');
          throw badRequest('chunk body ended early; resume from next_offset');
        } finally {
          await handle.close().catch(() => {});
        }
        // Only received bytes keep a session alive: empty chunks do not postpone the sweep.
        if (received > 0) {
          await db
            .update(uploadSessions)
            .set({ updatedAt: clock.now() })
            .where(eq(uploadSessions.uploadId, uploadId));
        }
        const size = await stagedSize(uploadId);
        return {
          upload_id: uploadId,
          status: size >= row.archiveSizeBytes ? 'complete' : 'receiving',
          next_offset: size,
          received_bytes: received,
        };
      });
    },

    async finalize(token: StationTokenRow, uploadId: string) {
      return withLock(uploadId, async () => {
        const row = await session(uploadId, token);
        if (row.status === 'stored') {
          return { status: 'stored', stored_as: row.storedAs, pruned: [] as string[], duplicate: false };
        }
        const path = stagedPath(uploadId);
        const size = await stagedSize(uploadId);
        if (size !== row.archiveSizeBytes) {
          throw conflict({
            status: 'incomplete',
            next_offset: size,
            message: `${size} of ${row.archiveSizeBytes} bytes received; send the rest before finalizing`,
          });
        }
        const sha = await sha256File(path);
        const facts = {
          scout_id: row.scoutId,
          scout_instance_id: row.scoutInstanceId,
          job_name: row.jobName,
          size_bytes: size,
          upload_id: row.uploadId,
        };
        if (sha !== row.archiveSha256) {
          await truncate(path, 0);
          deps.events?.failed(facts, 'the received bytes did not match archive_sha256');
          throw conflict({
            status: 'checksum_mismatch',
            next_offset: 0,
            message:
              'the received bytes do not match archive_sha256; they were discarded, upload again from offset 0',
          });
        }
        const ref = { scoutId: row.scoutId, instanceId: row.scoutInstanceId, jobName: row.jobName };
        const previous = await index.newest(ref);
        await deps.events?.beforeStore(facts);
        const storedAs = await store.commit(
          path,
          ref,
          snapshotFileName(row.jobName, row.timestamp, row.fingerprint),
        );
        const now = clock.now();
        const unusual = unusualReason({ sizeBytes: size, keyFingerprint: row.keyFingerprint }, previous);
        const stats = await store.stat({ ...ref, filename: storedAs });
        await index.insert({
          scoutId: row.scoutId,
          scoutInstanceId: row.scoutInstanceId,
          jobName: row.jobName,
          filename: storedAs,
          sizeBytes: size,
          sha256: sha,
          fingerprint: row.fingerprint,
          keyFingerprint: row.keyFingerprint,
          mtime: stats?.mtimeMs ?? now,
          storedAt: now,
          takenAt: timestampMs(row.timestamp),
          unusual,
          missing: false,
        });
        await markStored(row, storedAs);
        const pruned = await this.applyRetention(ref, storedAs);
        log.info({ stored_as: storedAs, bytes: size, pruned: pruned.length, unusual }, 'snapshot stored');
        deps.events?.stored({ ...facts, filename: storedAs, unusual: unusual ?? '', pruned: pruned.length });
        return {
          status: 'stored',
          stored_as: storedAs,
          pruned,
          duplicate: false,
          ...(unusual ? { unusual: true, unusual_reason: unusual } : {}),
        };
      });
    },

    /**
     * Deletes the job's snapshots beyond `retention_keep_last` (newest by their own time), never
     * `protect` nor one younger than `retention_keep_within_days`.
     */
    async applyRetention(ref: { scoutId: string; instanceId: string; jobName: string }, protect: string) {
      const { retention_keep_last, retention_keep_within_days } = await deps.settings.read();
      const keepSince =
        retention_keep_within_days > 0 ? clock.now() - retention_keep_within_days * DAY_MS : Infinity;
      const victims = await index.beyondRetention(ref, retention_keep_last, protect, keepSince);
      for (const victim of victims) {
        await store.remove({ ...ref, filename: victim.filename });
        await index.remove(ref, victim.filename);
      }
      return victims.map((v) => v.filename);
    },

    /** Start-up: staged files of no live session go; sessions lose nothing they had. */
    async reconcileStaging(stagedFiles: string[]): Promise<void> {
      const live = await db
        .select({ uploadId: uploadSessions.uploadId })
        .from(uploadSessions)
        .where(ne(uploadSessions.status, 'stored'));
      const liveIds = new Set(live.map((r) => r.uploadId));
      for (const file of stagedFiles) {
        const id = file.replace(/\.part$/, '');
        if (!liveIds.has(id)) await rm(join(stagingDir, file), { force: true });
      }
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
