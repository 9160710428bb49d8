import { eq } from 'drizzle-orm';
import { newId } from '../../core/auth/secrets.ts';
import { conflict, payloadTooLarge, unavailable } from '../../core/errors.ts';
import { uploadSessions } from '../db/station-tables.ts';
import { checkNotAhead } from '../services/snapshot-time.ts';
import type { StationTokenRow } from '../services/station-tokens.ts';
import { reserveName } from './reserve-name.ts';
import {
  liveSessionsOf,
  markStored,
  openStream,
  plannedSize,
  progressReply,
  stagedUploadOf,
  storedReply,
} from './sessions.ts';
import { checkSpace } from './space.ts';
import { supersede } from './supersede.ts';
import type { InitiateBody, JobKey, SessionRow, UploadDeps } from './types.ts';

/** Size and SHA-256 as an initiation declares them; null for a streamed upload (at finalize). */
type Declared = { size: number; sha256: string } | null;

const declaredOf = (body: InitiateBody): Declared =>
  body.archive_size_bytes !== undefined && body.archive_sha256 !== undefined
    ? { size: body.archive_size_bytes, sha256: body.archive_sha256 }
    : null;

/** Which field of a retried initiation differs from the session its idempotency key made. */
function differingField(existing: SessionRow, body: InitiateBody, declared: Declared): string | null {
  if ((existing.streamed === true) !== (declared === null)) return 'streamed';
  if (declared && existing.archiveSha256 !== declared.sha256) return 'archive_sha256';
  if (declared && existing.archiveSizeBytes !== declared.size) return 'archive_size_bytes';
  if (
    existing.scoutId !== body.scout_id ||
    existing.scoutInstanceId !== body.scout_instance_id ||
    existing.jobName !== body.job_name
  )
    return 'scout_id/scout_instance_id/job_name';
  return null;
}

/**
 * Refuses what this Station cannot take now: paused uploads, too large, storage unusable. A
 * streamed upload is held to MAX_UPLOAD_BYTES as its bytes arrive (413 for the chunk that
 * would pass it).
 */
async function checkAcceptable(deps: UploadDeps, body: InitiateBody, declared: Declared): Promise<void> {
  checkNotAhead(body.timestamp, deps.clock.now());
  if (await deps.acceptance.paused())
    throw unavailable('uploads are paused on this Station; try again later', 'uploads_paused');
  if (declared && declared.size > deps.maxUploadBytes) {
    throw payloadTooLarge(
      `archive_size_bytes ${declared.size} exceeds this Station's limit of ${deps.maxUploadBytes} bytes`,
    );
  }
  deps.store.chunkSizeFor(declared?.size ?? deps.maxUploadBytes);
  const health = await deps.store.health();
  if (!health.writable) throw unavailable(`storage unavailable: ${health.problem ?? 'not writable'}`);
}

/** A new upload beyond the job's retention_max_uploads_per_hour is refused (429). */
async function checkUploadRate(deps: UploadDeps, ref: JobKey): Promise<void> {
  if (!deps.uploadRate) return;
  const limits = deps.jobRetention ? await deps.jobRetention.effective(ref) : await deps.settings.read();
  await deps.uploadRate.check(ref, limits.retention_max_uploads_per_hour, deps.clock.now());
}

/** A retried initiation (same idempotency key): resumes, or answers what was stored. */
async function resume(deps: UploadDeps, token: StationTokenRow, existing: SessionRow) {
  // A newer token of the same instance takes the session over. Resuming does not make the
  // session younger: only received bytes do.
  if (existing.tokenHash !== token.tokenHash) {
    await deps.db
      .update(uploadSessions)
      .set({ tokenHash: token.tokenHash })
      .where(eq(uploadSessions.uploadId, existing.uploadId));
  }
  if (existing.status === 'stored') return storedReply(deps, existing, false);
  if (openStream(existing)) return progressReply(deps, { ...existing, tokenHash: token.tokenHash });
  const ref = { scoutId: existing.scoutId, instanceId: existing.scoutInstanceId, jobName: existing.jobName };
  const stored = await deps.index.bySha(ref, existing.archiveSha256, existing.archiveSizeBytes);
  if (stored) {
    await deps.store.abortStaging(stagedUploadOf(existing));
    return storedReply(deps, await markStored(deps, existing, stored.filename), true);
  }
  return progressReply(deps, { ...existing, tokenHash: token.tokenHash });
}

/**
 * Starts an upload (or resumes the one of the same idempotency key): binds the token to the
 * instance, refuses what cannot fit, reserves the snapshot's name and opens its staging area.
 * A streamed upload (no size or SHA-256 yet) is checked against, and holds, the size of its
 * job's newest snapshot: the best guess there is of what will arrive (0 for a job's first).
 */
export async function initiate(
  deps: UploadDeps,
  sweepIfDue: () => Promise<void>,
  token: StationTokenRow,
  body: InitiateBody,
) {
  const declared = declaredOf(body);
  await checkAcceptable(deps, body, declared);
  await sweepIfDue();
  const ref = { scoutId: body.scout_id, instanceId: body.scout_instance_id, jobName: body.job_name };
  const [existing] = await deps.db
    .select()
    .from(uploadSessions)
    .where(eq(uploadSessions.idempotencyKey, body.idempotency_key));
  if (existing) {
    const differs = differingField(existing, body, declared);
    if (differs)
      throw conflict(`idempotency_key was already used for an upload with another ${differs}; use a new key`);
  }
  // A new upload that cannot fit is refused before it claims the instance for the token.
  const duplicate =
    existing || !declared ? undefined : await deps.index.bySha(ref, declared.sha256, declared.size);
  // Older unfinished sessions of this instance and job give way to a new upload (after the
  // binding below has accepted this token for the instance); their space is not counted.
  const superseded = existing ? [] : await liveSessionsOf(deps, ref);
  const ignore = new Set(superseded.map((row) => row.uploadId));
  const expected = declared?.size ?? (existing ? 0 : ((await deps.index.newest(ref))?.sizeBytes ?? 0));
  if (!existing && !duplicate) await checkSpace(deps, token.tokenHash, expected, ignore);
  await deps.tokens.bind(token, body.scout_id, body.scout_instance_id);
  // Counted only once the token is known to be this instance's: no token can use up another's.
  if (!existing && !duplicate) await checkUploadRate(deps, ref);
  const now = deps.clock.now();
  await deps.index.touchInstance(
    body.scout_id,
    body.scout_instance_id,
    { keyFingerprint: body.encryption_key_fingerprint, advertisedUrl: body.advertised_url },
    now,
  );
  if (existing) return resume(deps, token, existing);

  const row: SessionRow = {
    uploadId: newId(),
    idempotencyKey: body.idempotency_key,
    tokenHash: token.tokenHash,
    scoutId: body.scout_id,
    scoutInstanceId: body.scout_instance_id,
    jobName: body.job_name,
    fingerprint: body.fingerprint,
    timestamp: body.timestamp,
    archiveSizeBytes: declared?.size ?? deps.maxUploadBytes,
    archiveSha256: declared?.sha256 ?? '',
    keyFingerprint: body.encryption_key_fingerprint ?? null,
    status: duplicate ? 'stored' : 'receiving',
    storedAs: duplicate?.filename ?? null,
    createdAt: now,
    updatedAt: now,
    targetName: duplicate ? null : await reserveName(deps, ref, body, ignore),
    storeState: null,
    lockOwner: null,
    lockUntil: null,
    streamed: declared ? null : true,
    reservedBytes: declared ? null : expected,
  };
  const [inserted] = await deps.db.insert(uploadSessions).values(row).onConflictDoNothing().returning();
  if (!inserted) throw conflict('idempotency_key is being initiated by another request; retry');
  await supersede(deps, superseded, inserted);
  if (duplicate) return storedReply(deps, inserted, true);
  const upload = stagedUploadOf(inserted);
  const state = await deps.store.beginStaging({
    uploadId: upload.uploadId,
    target: upload.target,
    sizeBytes: plannedSize(inserted),
  });
  if (state !== null) {
    await deps.db
      .update(uploadSessions)
      .set({ storeState: state })
      .where(eq(uploadSessions.uploadId, row.uploadId));
  }
  return progressReply(deps, { ...inserted, storeState: state });
}
