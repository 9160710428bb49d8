import { and, desc, eq, gt } from 'drizzle-orm';
import { newId } from '../../core/auth/secrets.ts';
import { clock, DAY_MS } from '../../core/clock.ts';
import { badRequest, conflict, notFound } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type {
  RestoreRequestCreated,
  RestoreRequestRecord,
  RestoreRequestRecordList,
  RestoreRequestReply,
} from '../../shared/protocol/restore-requests.ts';
import type { StationDb } from '../db/open.ts';
import { restoreRequests, tokenBindings } from '../db/station-tables.ts';
import type { SnapshotKey } from '../storage/storage.ts';
import { isHintTarget, pinnedHintUrl } from './hint-target.ts';
import type { SnapshotIndex } from './snapshot-index.ts';
import { checkJobRef } from './snapshots.ts';
import type { StationTokenRow, StationTokens } from './station-tokens.ts';

const log = logger.child({ mod: 'station/restore-requests' });

export const REQUEST_LIFETIME_MS = 60 * 60 * 1000;
const LISTED_FOR_MS = 7 * DAY_MS;
const HINT_TIMEOUT_MS = 3000;

export type RequestStatus = 'pending' | 'accepted' | 'rejected' | 'completed' | 'expired';
type Row = typeof restoreRequests.$inferSelect;

/**
 * Allowed moves: pending → accepted or rejected; accepted → completed or rejected (the
 * restore failed or was abandoned). Posting the current status again changes nothing.
 * One hour after creation a request that is not completed or rejected reads `expired`.
 */
const MOVES: Record<string, string[]> = {
  pending: ['accepted', 'rejected'],
  accepted: ['completed', 'rejected'],
};

const targetIs = (scoutId: string, instanceId: string) =>
  and(eq(restoreRequests.targetScoutId, scoutId), eq(restoreRequests.targetInstanceId, instanceId));

function effectiveStatus(row: Row): RequestStatus {
  const final = row.status === 'completed' || row.status === 'rejected';
  if (!final && clock.now() >= row.createdAt + REQUEST_LIFETIME_MS) return 'expired';
  return row.status as RequestStatus;
}

export function requestView(row: Row): RestoreRequestRecord {
  return {
    id: row.id,
    source_scout_id: row.sourceScoutId,
    source_instance_id: row.sourceInstanceId,
    target_scout_id: row.targetScoutId,
    target_instance_id: row.targetInstanceId,
    job_name: row.jobName,
    filename: row.filename,
    status: effectiveStatus(row),
    created_at: new Date(row.createdAt).toISOString(),
    updated_at: new Date(row.updatedAt).toISOString(),
    expires_at: new Date(row.createdAt + REQUEST_LIFETIME_MS).toISOString(),
  };
}

/** Restore requests: created by an admin, fetched and decided by the target Scout. */
export function createRestoreRequests(deps: {
  db: StationDb;
  index: SnapshotIndex;
  tokens: StationTokens;
  /** `RESTORE_HINT_HOSTS`: hosts kept as advertised (hint-target.ts). */
  hintHosts: readonly string[];
  /** Sends the hint; resolves whether the Scout answered 2xx. */
  hint?: (advertisedUrl: string, id: string) => Promise<boolean>;
  onCreated?: (request: ReturnType<typeof requestView>) => void;
}) {
  const { db, index } = deps;

  /**
   * POSTs `{id}` to `{advertised_url}/backup/restore-notifications`. The URL is built with the
   * URL API (a stored query or fragment, even a bare `?` or `#`, cannot cut the path off), a
   * redirect is an answer not followed, and a Scout that does not answer is given up on soon.
   * Only to an IP address (the one the Scout connected from) or a host in RESTORE_HINT_HOSTS.
   */
  async function sendHint(advertisedUrl: string, id: string): Promise<boolean> {
    let target: URL;
    try {
      target = new URL(advertisedUrl);
    } catch {
      log.warn({ id }, 'restore hint not sent: the advertised URL is not a URL');
      return false;
    }
    if (!isHintTarget(target, deps.hintHosts)) {
      log.warn({ id, host: target.hostname }, 'restore hint not sent: the host is not in RESTORE_HINT_HOSTS');
      return false;
    }
    target.pathname = `${target.pathname.replace(/\/+$/, '')}/backup/restore-notifications`;
    target.search = '';
    target.hash = '';
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id }),
        redirect: 'manual',
        signal: AbortSignal.timeout(HINT_TIMEOUT_MS),
      });
      await res.body?.cancel().catch(() => {});
      if (!res.ok) log.warn({ id, status: res.status }, 'the Scout did not accept the restore hint');
      return res.ok;
    } catch (error) {
      // A timeout is a DOMException; a refused connection says why in its cause's code.
      const { name, cause } = error as { name?: string; cause?: { code?: string } };
      const reason =
        name === 'TimeoutError' ? `no answer within ${HINT_TIMEOUT_MS} ms` : (cause?.code ?? name);
      log.warn({ id, reason }, 'restore hint did not reach the Scout');
      return false;
    }
  }

  async function forInstance(
    token: StationTokenRow,
    scoutId: string,
    instanceId: string,
    id: string,
  ): Promise<Row> {
    await deps.tokens.requireBinding(token, scoutId, instanceId);
    const [row] = await db
      .select()
      .from(restoreRequests)
      .where(and(eq(restoreRequests.id, id), targetIs(scoutId, instanceId)));
    if (!row) throw notFound(`no restore request ${id} for ${scoutId}/${instanceId}`);
    return row;
  }

  return {
    /** The `advertised_url` of an initiation from `from`, as it is kept (hint-target.ts). */
    pinHintUrl: (advertisedUrl: string | undefined, from: string) =>
      pinnedHintUrl(advertisedUrl, from, deps.hintHosts),

    async create(
      snapshot: SnapshotKey & { instanceId: string },
      target: { scoutId: string; instanceId: string } | null,
    ): Promise<RestoreRequestCreated> {
      const ref = { scoutId: snapshot.scoutId, instanceId: snapshot.instanceId, jobName: snapshot.jobName };
      checkJobRef(ref);
      const row = await index.byName(ref, snapshot.filename);
      if (!row || row.missing) throw notFound(`snapshot ${snapshot.filename} not found`);
      const source = await index.instance(ref.scoutId, ref.instanceId);
      if (!source?.keyFingerprint) {
        throw conflict(
          'the source instance never reported its Scout key fingerprint; the snapshot cannot be matched to a key',
        );
      }
      const to = target ?? { scoutId: ref.scoutId, instanceId: ref.instanceId };
      if (target) {
        checkJobRef({ ...target, jobName: ref.jobName });
        const [bound] = await db
          .select()
          .from(tokenBindings)
          .where(
            and(eq(tokenBindings.scoutId, to.scoutId), eq(tokenBindings.scoutInstanceId, to.instanceId)),
          );
        if (!bound) throw conflict(`the target ${to.scoutId}/${to.instanceId} has no bound Station token`);
      }
      const now = clock.now();
      const [created] = await db
        .insert(restoreRequests)
        .values({
          id: newId(),
          sourceScoutId: ref.scoutId,
          sourceInstanceId: ref.instanceId,
          targetScoutId: to.scoutId,
          targetInstanceId: to.instanceId,
          jobName: ref.jobName,
          filename: snapshot.filename,
          status: 'pending',
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      if (!created) throw new Error('restore request insert returned no row');
      const targetFacts = await index.instance(to.scoutId, to.instanceId);
      const notified = targetFacts?.advertisedUrl
        ? await (deps.hint ?? sendHint)(targetFacts.advertisedUrl, created.id)
        : false;
      const view = requestView(created);
      deps.onCreated?.(view);
      return { request: view, notified };
    },

    async list(
      token: StationTokenRow,
      scoutId: string,
      instanceId: string,
    ): Promise<RestoreRequestRecordList> {
      await deps.tokens.requireBinding(token, scoutId, instanceId);
      const rows = await db
        .select()
        .from(restoreRequests)
        .where(and(targetIs(scoutId, instanceId), gt(restoreRequests.createdAt, clock.now() - LISTED_FOR_MS)))
        .orderBy(desc(restoreRequests.createdAt));
      return { requests: rows.map(requestView) };
    },

    /** Every request of the last seven days, newest first (the dashboard's list). */
    async listRecent(): Promise<RestoreRequestRecordList> {
      const rows = await db
        .select()
        .from(restoreRequests)
        .where(gt(restoreRequests.createdAt, clock.now() - LISTED_FOR_MS))
        .orderBy(desc(restoreRequests.createdAt));
      return { requests: rows.map(requestView) };
    },

    async update(
      token: StationTokenRow,
      scoutId: string,
      instanceId: string,
      id: string,
      status: string,
    ): Promise<RestoreRequestReply> {
      if (!['accepted', 'rejected', 'completed'].includes(status)) {
        throw badRequest('status must be accepted, rejected or completed');
      }
      const row = await forInstance(token, scoutId, instanceId, id);
      const current = effectiveStatus(row);
      if (current === status) return { request: requestView(row) };
      if (current === 'expired')
        throw conflict('the restore request expired; ask the Station admin for a new one', 'expired');
      if (!MOVES[current]?.includes(status))
        throw conflict(`a ${current} restore request cannot become ${status}`);
      const [updated] = await db
        .update(restoreRequests)
        .set({ status, updatedAt: clock.now() })
        .where(and(eq(restoreRequests.id, id), eq(restoreRequests.status, row.status)))
        .returning();
      if (!updated) throw conflict('the restore request changed meanwhile; read it again');
      return { request: requestView(updated) };
    },

    /** The source snapshot of a live accepted request, for its receiving instance. */
    async archive(
      token: StationTokenRow,
      scoutId: string,
      instanceId: string,
      id: string,
    ): Promise<SnapshotKey> {
      const row = await forInstance(token, scoutId, instanceId, id);
      const status = effectiveStatus(row);
      if (status === 'expired')
        throw conflict('the restore request expired; ask the Station admin for a new one', 'expired');
      if (status !== 'accepted') throw notFound(`restore request ${id} is ${status}, not accepted`);
      return {
        scoutId: row.sourceScoutId,
        instanceId: row.sourceInstanceId,
        jobName: row.jobName,
        filename: row.filename,
      };
    },
  };
}

export type RestoreRequests = ReturnType<typeof createRestoreRequests>;
