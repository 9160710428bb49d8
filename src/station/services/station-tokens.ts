import { and, count, eq, gt, ne, sql } from 'drizzle-orm';
import { jwtVerify, SignJWT } from 'jose';
import { newId, sha256Hex } from '../../core/auth/secrets.ts';
import { clock, DAY_MS } from '../../core/clock.ts';
import { AppError, badRequest, notFound, unauthorized } from '../../core/errors.ts';
import type {
  MintedRecoveryToken,
  MintedStationToken,
  StationTokensRevoked,
  StationTokenView,
} from '../../shared/protocol/station-tokens.ts';
import type { StationDb } from '../db/open.ts';
import { instances, stationTokens, tokenBindings } from '../db/station-tables.ts';
import type { SigningKeys } from './signing-key.ts';

export const DEFAULT_STATION_TOKEN_TTL_DAYS = 365;
const AUDIENCE = 'backupd-station';

const iso = (ms: number) => new Date(ms).toISOString();

export interface MintRequest {
  ttl_days: number;
  shared: boolean;
  max_registrations?: number | undefined;
  /** A recovery token: minted already bound to this instance (which must exist). */
  bind_to?: { scoutId: string; instanceId: string } | undefined;
  /** With `bind_to`: revoke every other token bound to the instance in the same step. */
  revoke_other_tokens?: boolean | undefined;
}

export interface StationTokenRow {
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  shared: boolean;
  maxRegistrations: number;
}

/** Advisory-lock class of binding decisions (two-key form: its own key space). */
const BINDING_LOCK_CLASS = 0x62696e64;

type Tx = Parameters<Parameters<StationDb['transaction']>[0]>[0];

/**
 * Holds the instance's binding lock until the transaction ends. It lives in the database, so
 * two Stations on one PostgreSQL decide one binding of an instance at a time.
 */
const lockInstance = (tx: Tx, scoutId: string, instanceId: string) =>
  tx.execute(
    sql`SELECT pg_advisory_xact_lock(${BINDING_LOCK_CLASS}, hashtext(${`${scoutId}/${instanceId}`}::text))`,
  );

const bindingConflict = (detail: string) => new AppError(409, detail, { code: 'binding_conflict' });

const instanceBindings = (scoutId: string, instanceId: string) =>
  and(eq(tokenBindings.scoutId, scoutId), eq(tokenBindings.scoutInstanceId, instanceId));

const bindingOf = (tokenHash: string, scoutId: string, instanceId: string) =>
  and(
    eq(tokenBindings.tokenHash, tokenHash),
    eq(tokenBindings.scoutId, scoutId),
    eq(tokenBindings.scoutInstanceId, instanceId),
  );

const othersNote = (n: number) =>
  n === 0
    ? ''
    : n === 1
      ? " The instance's other token stays valid until you revoke it."
      : ` The instance's ${n} other tokens stay valid until you revoke them.`;

/** Other live (unexpired; revoked ones are deleted) tokens bound to the instance. */
async function liveHolders(tx: Tx, scoutId: string, instanceId: string, except: string, now: number) {
  return tx
    .select({ tokenHash: tokenBindings.tokenHash })
    .from(tokenBindings)
    .innerJoin(stationTokens, eq(stationTokens.tokenHash, tokenBindings.tokenHash))
    .where(
      and(
        instanceBindings(scoutId, instanceId),
        ne(tokenBindings.tokenHash, except),
        gt(stationTokens.expiresAt, now),
      ),
    );
}

/** Deletes every token bound to the instance; their bindings go with them (cascade). */
async function revokeBoundTo(tx: Tx, scoutId: string, instanceId: string) {
  const hashes = (
    await tx
      .select({ tokenHash: tokenBindings.tokenHash })
      .from(tokenBindings)
      .where(instanceBindings(scoutId, instanceId))
  ).map((r) => r.tokenHash);
  if (hashes.length === 0) return { revoked_rows: 0, affected_instances: 0 };
  const affected = await tx
    .select({
      n: sql<number>`count(DISTINCT (${tokenBindings.scoutId}, ${tokenBindings.scoutInstanceId}))`,
    })
    .from(tokenBindings)
    .where(sql`${tokenBindings.tokenHash} IN ${hashes}`);
  const gone = await tx
    .delete(stationTokens)
    .where(sql`${stationTokens.tokenHash} IN ${hashes}`)
    .returning({ tokenHash: stationTokens.tokenHash });
  return { revoked_rows: gone.length, affected_instances: Number(affected[0]?.n ?? 0) };
}

/** `keys` gives the signing key every Station on the database shares (see signing-key.ts). */
export function createStationTokens(db: StationDb, keys: () => Promise<SigningKeys>) {
  return {
    /** Loads the shared signing key now (at start-up: adopts a data dir's old key file). */
    async ready(): Promise<void> {
      await keys();
    },

    async mint(input: MintRequest): Promise<MintedStationToken | MintedRecoveryToken> {
      if (!input.shared && input.max_registrations !== undefined && input.max_registrations !== 1) {
        throw badRequest('max_registrations applies to shared tokens only (set shared: true)');
      }
      const target = input.bind_to;
      if (target && input.shared)
        throw badRequest(
          'a recovery token (scout_id and scout_instance_id) is for one instance; leave shared off',
        );
      if (!target && input.revoke_other_tokens)
        throw badRequest('revoke_other_tokens needs scout_id and scout_instance_id (a recovery token)');
      if (target) {
        const [known] = await db
          .select({ scoutId: instances.scoutId })
          .from(instances)
          .where(
            and(eq(instances.scoutId, target.scoutId), eq(instances.scoutInstanceId, target.instanceId)),
          );
        if (!known) {
          throw notFound(
            `no Scout instance ${target.scoutId}/${target.instanceId} on this Station; a recovery token is for an instance that has uploaded`,
          );
        }
      }
      const max = input.shared ? (input.max_registrations ?? 10) : 1;
      if (input.shared && (max < 2 || max > 10_000))
        throw badRequest('max_registrations must be from 2 to 10000');
      const now = clock.now();
      const expiresAt = now + input.ttl_days * DAY_MS;
      const token = await new SignJWT({ shared: input.shared, max_registrations: max })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor(expiresAt / 1000))
        .setAudience(AUDIENCE)
        .setJti(newId())
        .sign((await keys()).privateKey);
      const tokenHash = sha256Hex(token);
      const row = { tokenHash, createdAt: now, expiresAt, shared: input.shared, maxRegistrations: max };
      const reply: MintedStationToken = {
        credential: token,
        ttl_days: input.ttl_days,
        shared: input.shared,
        max_registrations: max,
        message: input.shared
          ? `Station token for up to ${max} Scout instances; it is shown only now. Set it as scout_credential on each Scout.`
          : 'Station token for one Scout instance; it is shown only now. Set it as scout_credential on the Scout.',
      };
      if (!target) {
        await db.insert(stationTokens).values(row);
        return reply;
      }
      const { scoutId, instanceId } = target;
      const outcome = await db.transaction(async (tx) => {
        await lockInstance(tx, scoutId, instanceId);
        let revoked = { revoked_rows: 0, affected_instances: 0 };
        if (input.revoke_other_tokens) revoked = await revokeBoundTo(tx, scoutId, instanceId);
        await tx.insert(stationTokens).values(row);
        await tx
          .insert(tokenBindings)
          .values({ tokenHash, scoutId, scoutInstanceId: instanceId, boundAt: now });
        const others = await liveHolders(tx, scoutId, instanceId, tokenHash, now);
        return { ...revoked, other_live_tokens: others.length };
      });
      return {
        ...reply,
        scout_id: scoutId,
        scout_instance_id: instanceId,
        ...outcome,
        message:
          `Recovery token bound to ${scoutId}/${instanceId}; it is shown only now. Use it with backupd scout restore on the rebuilt host.` +
          othersNote(outcome.other_live_tokens),
      };
    },

    async list(): Promise<StationTokenView[]> {
      const tokens = await db.select().from(stationTokens).orderBy(stationTokens.createdAt);
      const bindings = await db.select().from(tokenBindings);
      const now = clock.now();
      return tokens.map((t) => ({
        token_hash: t.tokenHash,
        created_at: iso(t.createdAt),
        expires_at: iso(t.expiresAt),
        expired: t.expiresAt <= now,
        shared: t.shared,
        max_registrations: t.maxRegistrations,
        registrations: bindings
          .filter((b) => b.tokenHash === t.tokenHash)
          .map((b) => ({
            scout_id: b.scoutId,
            scout_instance_id: b.scoutInstanceId,
            bound_at: iso(b.boundAt),
          })),
      }));
    },

    /** Revokes a token by hash; its bindings go with it, so a shared token stops everywhere. */
    async revoke(tokenHash: string): Promise<StationTokensRevoked> {
      const bound = await db.select().from(tokenBindings).where(eq(tokenBindings.tokenHash, tokenHash));
      const gone = await db
        .delete(stationTokens)
        .where(eq(stationTokens.tokenHash, tokenHash))
        .returning({ tokenHash: stationTokens.tokenHash });
      if (gone.length === 0) throw notFound('no Station token with that token_hash');
      return { status: 'revoked', token_hash: tokenHash, revoked_rows: 1, affected_instances: bound.length };
    },

    /** Revokes every token bound to the instance (and so every other binding of those tokens). */
    async revokeInstance(scoutId: string, instanceId: string): Promise<StationTokensRevoked> {
      return db.transaction(async (tx) => {
        await lockInstance(tx, scoutId, instanceId);
        return revokeBoundTo(tx, scoutId, instanceId);
      });
    },

    /** The live token behind a bearer value on `/backup/...`, or 401. */
    async authenticate(token: string): Promise<StationTokenRow> {
      const { publicKey } = await keys();
      try {
        await jwtVerify(token, publicKey, {
          algorithms: ['EdDSA'],
          audience: AUDIENCE,
          currentDate: clock.date(),
        });
      } catch {
        throw unauthorized('Station token is invalid or expired; mint a new one on the Station');
      }
      const [row] = await db
        .select()
        .from(stationTokens)
        .where(eq(stationTokens.tokenHash, sha256Hex(token)));
      if (!row) throw unauthorized('Station token was revoked; mint a new one on the Station');
      if (row.expiresAt <= clock.now())
        throw unauthorized('Station token expired; mint a new one on the Station');
      return row;
    },

    /**
     * Binds the token to the instance, or confirms it is bound. An instance bound to another live
     * token (not revoked, not expired) is reserved for it: 409 `binding_conflict`. Runs under the
     * instance's advisory lock and a row lock on the token, so concurrent initiations (on any
     * Station of the database) never bind one instance to two tokens, nor a token to more
     * instances than it allows. A token already bound (e.g. a recovery token) always may.
     */
    async bind(token: StationTokenRow, scoutId: string, instanceId: string): Promise<void> {
      await db.transaction(async (tx) => {
        await lockInstance(tx, scoutId, instanceId);
        const [locked] = await tx
          .select()
          .from(stationTokens)
          .where(eq(stationTokens.tokenHash, token.tokenHash))
          .for('update');
        if (!locked) throw unauthorized('Station token was revoked; mint a new one on the Station');
        const [existing] = await tx
          .select()
          .from(tokenBindings)
          .where(bindingOf(token.tokenHash, scoutId, instanceId));
        if (existing) return;
        const holders = await liveHolders(tx, scoutId, instanceId, token.tokenHash, clock.now());
        if (holders.length > 0) {
          throw bindingConflict(
            `Scout instance ${scoutId}/${instanceId} is bound to another Station token that is still valid; ` +
              'revoke the old token first (Station tokens: revoke by hash or by instance), then this token binds',
          );
        }
        const [{ n } = { n: 0 }] = await tx
          .select({ n: count() })
          .from(tokenBindings)
          .where(eq(tokenBindings.tokenHash, token.tokenHash));
        if (Number(n) >= locked.maxRegistrations) {
          throw bindingConflict(
            locked.shared
              ? `this shared Station token already has its ${locked.maxRegistrations} registrations; mint another token`
              : 'this Station token is bound to another Scout instance; mint a token for each instance',
          );
        }
        await tx.insert(tokenBindings).values({
          tokenHash: token.tokenHash,
          scoutId,
          scoutInstanceId: instanceId,
          boundAt: clock.now(),
        });
      });
    },

    /** Recovery needs an existing binding to the requested instance. */
    async requireBinding(token: StationTokenRow, scoutId: string, instanceId: string): Promise<void> {
      const [row] = await db
        .select()
        .from(tokenBindings)
        .where(bindingOf(token.tokenHash, scoutId, instanceId));
      if (!row) {
        throw new AppError(
          403,
          `this Station token is not bound to ${scoutId}/${instanceId}; recover with the instance's own token, or mint a recovery token for the instance on the Station`,
          { code: 'not_bound' },
        );
      }
    },
  };
}

export type StationTokens = ReturnType<typeof createStationTokens>;
