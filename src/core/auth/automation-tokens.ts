import { and, desc, eq } from 'drizzle-orm';
import type { AutomationTokenView, CreatedAutomationToken } from '../../shared/protocol/accounts.ts';
import { clock, DAY_MS } from '../clock.ts';
import type { CoreDb, CoreTables } from '../db/core-db.ts';
import { notFound, unauthorized } from '../errors.ts';
import { newId, newSecret, sha256Hex } from './secrets.ts';
import type { Scope, TokenRow, UserRow } from './types.ts';

export const TOKEN_PREFIX = 'bkd_at_';
export const DEFAULT_TOKEN_TTL_DAYS = 90;

const iso = (ms: number) => new Date(ms).toISOString();

/** A token's metadata as the API shows it; never the secret. */
export function tokenMetadata(row: TokenRow): AutomationTokenView {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes.split(',') as Scope[],
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    last_used_at: row.lastUsedAt === null ? null : iso(row.lastUsedAt),
    expired: row.expiresAt <= clock.now(),
  };
}

export function createAutomationTokens(db: CoreDb, { users, automationTokens }: CoreTables) {
  return {
    async create(
      owner: UserRow,
      input: { name: string; scopes: Scope[]; ttl_days?: number },
    ): Promise<CreatedAutomationToken> {
      const token = newSecret(TOKEN_PREFIX);
      const now = clock.now();
      const [row] = await db
        .insert(automationTokens)
        .values({
          id: newId(),
          userId: owner.id,
          name: input.name,
          tokenHash: sha256Hex(token),
          scopes: [...new Set(input.scopes)].join(','),
          createdAt: now,
          expiresAt: now + (input.ttl_days ?? DEFAULT_TOKEN_TTL_DAYS) * DAY_MS,
          lastUsedAt: null,
        })
        .returning();
      if (!row) throw new Error('token insert returned no row');
      return { token, automation_token: tokenMetadata(row) };
    },

    async list(owner: UserRow) {
      const rows = await db
        .select()
        .from(automationTokens)
        .where(eq(automationTokens.userId, owner.id))
        .orderBy(desc(automationTokens.createdAt));
      return rows.map(tokenMetadata);
    },

    async revoke(owner: UserRow, id: string): Promise<void> {
      const gone = await db
        .delete(automationTokens)
        .where(and(eq(automationTokens.id, id), eq(automationTokens.userId, owner.id)))
        .returning({ id: automationTokens.id });
      if (gone.length === 0) throw notFound(`no automation token with id ${id}`);
    },

    /**
     * The token and its owner, when the token is usable: not revoked, not expired, and its
     * owner still an admin who need not change their password.
     */
    async authenticate(secret: string): Promise<{ user: UserRow; token: TokenRow; scopes: Scope[] }> {
      const [row] = await db
        .select({ token: automationTokens, user: users })
        .from(automationTokens)
        .innerJoin(users, eq(users.id, automationTokens.userId))
        .where(eq(automationTokens.tokenHash, sha256Hex(secret)));
      const now = clock.now();
      if (!row || row.token.expiresAt <= now)
        throw unauthorized('automation token is invalid, revoked or expired');
      if (!row.user.isAdmin || row.user.mustChangePassword) {
        throw unauthorized(
          'automation token no longer works: its owner is not an admin or must change password',
        );
      }
      await db.update(automationTokens).set({ lastUsedAt: now }).where(eq(automationTokens.id, row.token.id));
      return { user: row.user, token: row.token, scopes: row.token.scopes.split(',') as Scope[] };
    },
  };
}

export type AutomationTokens = ReturnType<typeof createAutomationTokens>;
