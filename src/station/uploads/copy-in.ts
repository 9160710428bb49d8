import type { Readable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { newId } from '../../core/auth/secrets.ts';
import { AppError } from '../../core/errors.ts';
import { utcSecond } from '../../shared/protocol/fields.ts';
import { uploadSessions } from '../db/station-tables.ts';
import { snapshotPath } from '../storage/layout.ts';
import { registerStaged } from './register.ts';
import { stagedUploadOf } from './sessions.ts';
import type { SessionRow, UploadDeps } from './types.ts';

/**
 * The token hash of a copy's session: not a SHA-256 hex, so no Station token ever matches it
 * and no chunk or finalize request can reach a copy.
 */
export const COPY_TOKEN_HASH = 'replication';

/** A snapshot of another Station as its listing describes it (src/station/replication/source-client.ts). */
export interface CopySource {
  scoutId: string;
  instanceId: string;
  jobName: string;
  filename: string;
  sizeBytes: number;
  sha256: string;
  fingerprint: string;
  keyFingerprint: string | null;
  takenAt: number;
  storedAt: number;
}

const copyKey = (s: CopySource) => `replication:${snapshotPath(s)}`;

/**
 * Copies into this Station go through the upload staging of its store, as an upload session
 * of their own: so an interrupted copy resumes from what the store holds (also after a
 * restart, on disk and on S3), the sweep and start-up keep its staging area while it is live,
 * and the copy appears only through `registerStaged` after its SHA-256 matched.
 */
export function createCopyIn(deps: UploadDeps) {
  async function sessionOf(source: CopySource): Promise<SessionRow> {
    const key = copyKey(source);
    const [existing] = await deps.db
      .select()
      .from(uploadSessions)
      .where(eq(uploadSessions.idempotencyKey, key));
    if (existing && existing.status !== 'stored' && existing.archiveSha256 === source.sha256) return existing;
    if (existing) await deps.db.delete(uploadSessions).where(eq(uploadSessions.uploadId, existing.uploadId));
    if (existing && existing.status !== 'stored') await deps.store.abortStaging(stagedUploadOf(existing));
    const now = deps.clock.now();
    const row: SessionRow = {
      uploadId: newId(),
      idempotencyKey: key,
      tokenHash: COPY_TOKEN_HASH,
      scoutId: source.scoutId,
      scoutInstanceId: source.instanceId,
      jobName: source.jobName,
      fingerprint: source.fingerprint,
      timestamp: utcSecond(source.takenAt),
      archiveSizeBytes: source.sizeBytes,
      archiveSha256: source.sha256,
      keyFingerprint: source.keyFingerprint,
      status: 'receiving',
      storedAs: null,
      createdAt: now,
      updatedAt: now,
      targetName: source.filename,
      storeState: null,
      lockOwner: null,
      lockUntil: null,
      streamed: null,
      reservedBytes: null,
    };
    // The copy keeps the primary's name; one the store holds already is not copied over.
    if (await deps.store.exists(stagedUploadOf(row).target)) {
      throw new AppError(409, `a snapshot named ${source.filename} is already stored here`);
    }
    const state = await deps.store.beginStaging({
      uploadId: row.uploadId,
      target: stagedUploadOf(row).target,
      sizeBytes: row.archiveSizeBytes,
    });
    const [inserted] = await deps.db
      .insert(uploadSessions)
      .values({ ...row, storeState: state })
      .returning();
    if (!inserted) throw new Error('copy session insert returned no row');
    return inserted;
  }

  const busy = async () => new AppError(409, 'this copy is being written by another run');

  /** The session's row as it is now (read under its lock); 409 if a sweep or a newer run removed it. */
  async function currentRow(session: SessionRow): Promise<SessionRow> {
    const [row] = await deps.db
      .select()
      .from(uploadSessions)
      .where(eq(uploadSessions.uploadId, session.uploadId));
    if (!row) throw new AppError(409, 'the copy was removed while it ran (swept or superseded)');
    return row;
  }

  return {
    /** The copy's session (resumed, or new with an empty staging area) and its next offset. */
    async open(source: CopySource): Promise<{ session: SessionRow; next: number }> {
      const session = await sessionOf(source);
      return { session, next: await deps.store.stagedBytes(stagedUploadOf(session)) };
    },

    /** The size of each piece to append (one S3 part, so a piece's state is saved once whole). */
    pieceSize: (sizeBytes: number) => deps.store.partSizeFor(sizeBytes),

    /**
     * Appends `body` at `offset`; returns the next offset, and `interrupted` when the body failed
     * before its end (what was kept up to then stays, and the next run goes on from there).
     */
    async append(
      session: SessionRow,
      offset: number,
      body: Readable,
    ): Promise<{ next: number; interrupted?: unknown }> {
      return deps.lock(
        session.uploadId,
        async (hold) => {
          const row = await currentRow(session);
          const result = await deps.store.append(stagedUploadOf(row), offset, hold.guard(body));
          await hold.confirm();
          await deps.db
            .update(uploadSessions)
            .set({ storeState: result.state, updatedAt: deps.clock.now() })
            .where(eq(uploadSessions.uploadId, row.uploadId));
          return result.interrupted
            ? { next: result.stagedBytes, interrupted: result.interrupted }
            : { next: result.stagedBytes };
        },
        busy,
      );
    },

    /**
     * Checks the staged bytes against the source's SHA-256 and stores the copy under its name.
     * A mismatch discards what was staged (the next run copies it again from the start).
     */
    async complete(session: SessionRow, storedAt: number) {
      return deps.lock(
        session.uploadId,
        async (hold) => {
          const row = await currentRow(session);
          const upload = stagedUploadOf(row);
          const sha = await deps.store.stagedSha256(upload);
          await hold.confirm();
          if (sha !== row.archiveSha256) {
            const reset = await deps.store.resetStaging(upload);
            await deps.db
              .update(uploadSessions)
              .set({ storeState: reset.state })
              .where(eq(uploadSessions.uploadId, row.uploadId));
            throw new AppError(
              502,
              `the copy of ${row.targetName} does not match the source's SHA-256; it was discarded`,
            );
          }
          return registerStaged(deps, row, sha, storedAt);
        },
        busy,
      );
    },
  };
}

export type CopyIn = ReturnType<typeof createCopyIn>;
