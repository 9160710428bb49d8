import type { KeyObject } from 'node:crypto';
import { and, count, eq, sql } from 'drizzle-orm';
import { jwtVerify, SignJWT } from 'jose';
import { newId, sha256Hex } from '../../core/auth/secrets.ts';
import { clock, DAY_MS } from '../../core/clock.ts';
import { badRequest, conflict, forbidden, notFound, unauthorized } from '../../core/errors.ts';
import type { StationDb } from '../db/open.ts';
import { stationTokens, tokenBindings } from '../db/station-tables.ts';

export const DEFAULT_STATION_TOKEN_TTL_DAYS = 365;
const AUDIENCE = 'backupd-station';

const iso = (ms: number) => new Date(ms).toISOString();

export interface MintRequest {
  ttl_days: number;
  shared: boolean;
  max_registrations?: number;
}

export interface StationTokenRow {
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  shared: boolean;
  maxRegistrations: number;
}

const bindingOf = (tokenHash: string, scoutId: string, instanceId: string) =>
  and(
    eq(tokenBindings.tokenHash, tokenHash),
    eq(tokenBindings.scoutId, scoutId),
    eq(tokenBindings.scoutInstanceId, instanceId),
  );

export function createStationTokens(db: StationDb, keys: { privateKey: KeyObject; publicKey: KeyObject }) {
  return {
    async mint(input: MintRequest) {
      if (!input.shared && input.max_registrations !== undefined && input.max_registrations !== 1) {
        throw badRequest('max_registrations applies to shared tokens only (set shared: true)');
      }
      const max = input.shared ? (input.max_registrations ?? 10) : 1;
      if (input.shared && (max < 2 || max > 10_000))
        throw badRequest('max_registrations must be from 2 to 10000');
      const now = clock.now();
      const expiresAt = now + input.ttl_days * DAY_MS;
      const credential = await new SignJWT({ shared: input.shared, max_registrations: max })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor(expiresAt / 1000))
        .setAudience(AUDIENCE)
        .setJti(newId())
        .sign(keys.privateKey);
      await db.insert(stationTokens).values({
        tokenHash: sha256Hex(credential),
        createdAt: now,
        expiresAt,
        shared: input.shared,
        maxRegistrations: max,
      });
      return {
        credential,
        ttl_days: input.ttl_days,
        shared: input.shared,
        max_registrations: max,
        message: input.shared
          ? `Station token for up to ${max} Scout instances; it is shown only now. Set it as scout_credential on each Scout.`
          : 'Station token for one Scout instance; it is shown only now. Set it as scout_credential on the Scout.',
      };
    },

    async list() {
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
    async revoke(tokenHash: string) {
      const bound = await db.select().from(tokenBindings).where(eq(tokenBindings.tokenHash, tokenHash));
      const gone = await db
        .delete(stationTokens)
        .where(eq(stationTokens.tokenHash, tokenHash))
        .returning({ tokenHash: stationTokens.tokenHash });
      if (gone.length === 0) throw notFound('no Station token with that token_hash');
      return { status: 'revoked', token_hash: tokenHash, revoked_rows: 1, affected_instances: bound.length };
    },

    /** Revokes every token bound to the instance (and so every other binding of those tokens). */
    async revokeInstance(scoutId: string, instanceId: string) {
      const hashes = (
        await db
          .select({ tokenHash: tokenBindings.tokenHash })
          .from(tokenBindings)
          .where(and(eq(tokenBindings.scoutId, scoutId), eq(tokenBindings.scoutInstanceId, instanceId)))
      ).map((r) => r.tokenHash);
      if (hashes.length === 0) return { revoked_rows: 0, affected_instances: 0 };
      const affected = await db
        .select({
          n: sql<number>`count(DISTINCT (${tokenBindings.scoutId}, ${tokenBindings.scoutInstanceId}))`,
        })
        .from(tokenBindings)
        .where(sql`${tokenBindings.tokenHash} IN ${hashes}`);
      const gone = await db
        .delete(stationTokens)
        .where(sql`${stationTokens.tokenHash} IN ${hashes}`)
        .returning({ tokenHash: stationTokens.tokenHash });
      return { revoked_rows: gone.length, affected_instances: Number(affected[0]?.n ?? 0) };
    },

    /** The live token behind a bearer value on `/backup/...`, or 401. */
    async authenticate(credential: string): Promise<StationTokenRow> {
      try {
        await jwtVerify(credential, keys.publicKey, {
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
        .where(eq(stationTokens.tokenHash, sha256Hex(credential)));
      if (!row) throw unauthorized('Station token was revoked; mint a new one on the Station');
      if (row.expiresAt <= clock.now())
        throw unauthorized('Station token expired; mint a new one on the Station');
      return row;
    },

    /**
     * Binds the token to the instance, or confirms it is bound. Runs under a row lock on the
     * token, so concurrent initiations can never bind more instances than the token allows.
     */
    async bind(token: StationTokenRow, scoutId: string, instanceId: string): Promise<void> {
      await db.transaction(async (tx) => {
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
        const [{ n } = { n: 0 }] = await tx
          .select({ n: count() })
          .from(tokenBindings)
          .where(eq(tokenBindings.tokenHash, token.tokenHash));
        if (Number(n) >= locked.maxRegistrations) {
          throw conflict(
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
      if (!row) throw forbidden(`this Station token is not bound to ${scoutId}/${instanceId}`);
    },
  };
}

export type StationTokens = ReturnType<typeof createStationTokens>;
