import { and, eq, lte, ne } from 'drizzle-orm';
import { clock, DAY_MS } from '../clock.ts';
import type { CoreDb, CoreTables } from '../db/core-db.ts';
import { badRequest, tooManyRequests, unauthorized } from '../errors.ts';
import { logger } from '../log.ts';
import type { Accounts } from './accounts.ts';
import { checkPassword } from './accounts.ts';
import { type Limit, reserve, type Slot, type WindowCounter } from './rate-limit.ts';
import { DUMMY_PASSWORD_HASH, hashPassword, newSecret, sha256Hex, verifyPassword } from './secrets.ts';
import type { UserRow } from './types.ts';

const log = logger.child({ mod: 'core/auth/sessions' });

export const SESSION_LIFETIME_MS = 7 * DAY_MS;
/** Failed sign-ins per client address, and per username from one address, in the window. */
const SIGN_IN_FAILURES = 10;
/**
 * Failed sign-ins for one username from all addresses together: high enough that an attacker
 * spraying one address at a time cannot lock the owner out cheaply, low enough to stop guessing.
 */
const SIGN_IN_FAILURES_PER_USERNAME = 100;
const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
const failuresByClient: Limit = { name: 'sign-in', limit: SIGN_IN_FAILURES, windowMs: SIGN_IN_WINDOW_MS };
const failuresByUserAndClient: Limit = {
  name: 'sign-in-user-client',
  limit: SIGN_IN_FAILURES,
  windowMs: SIGN_IN_WINDOW_MS,
};
const failuresByUser: Limit = {
  name: 'sign-in-user',
  limit: SIGN_IN_FAILURES_PER_USERNAME,
  windowMs: SIGN_IN_WINDOW_MS,
};

export interface ChangePassword {
  current_password: string;
  new_password: string;
  confirm_new_password: string;
}

/** `windows` counts the failed sign-ins (in the Station's database, in the Scout's memory). */
export function createSessions(
  db: CoreDb,
  { users, sessions }: CoreTables,
  accounts: Accounts,
  windows: WindowCounter,
) {
  async function start(user: UserRow): Promise<string> {
    const sessionId = newSecret('');
    const now = clock.now();
    await db.insert(sessions).values({
      idHash: sha256Hex(sessionId),
      userId: user.id,
      createdAt: now,
      expiresAt: now + SESSION_LIFETIME_MS,
    });
    // Expired rows of this account are cleared as new ones are made.
    await db.delete(sessions).where(and(eq(sessions.userId, user.id), lte(sessions.expiresAt, now)));
    return sessionId;
  }

  return {
    /**
     * Checks the credentials and opens a session. Failed attempts are limited per client
     * address, per (username, address) and, with a higher ceiling, per username. The attempt
     * is counted before the password is checked (so parallel guesses cannot all slip past
     * the limit while scrypt runs, on this Station or another one on the same database) and
     * taken back when it succeeds.
     */
    async login(
      username: string,
      password: string,
      client: string,
    ): Promise<{ sessionId: string; user: UserRow }> {
      const userKey = username.toLowerCase();
      const slots: Slot[] = [
        [failuresByClient, client],
        [failuresByUserAndClient, `${client} ${userKey}`],
        [failuresByUser, userKey],
      ];
      const attempt = await reserve(windows, slots);
      if (!attempt.release) {
        const wait = attempt.wait;
        const from = attempt.blockedBy === 2 ? 'for this account' : 'from this address';
        throw tooManyRequests(wait, `too many failed sign-ins ${from}; try again in ${wait} seconds`);
      }
      let user: UserRow | undefined;
      let ok = false;
      try {
        user = await accounts.byUsername(username);
        ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
      } catch (error) {
        await attempt.release();
        throw error;
      }
      if (!user || !ok) {
        log.warn({ client }, 'failed sign-in');
        throw unauthorized('wrong username or password');
      }
      await attempt.release();
      return { sessionId: await start(user), user };
    },

    /** The account behind a session cookie, or null when it is unknown or expired. */
    async resolve(sessionId: string): Promise<{ user: UserRow; sessionHash: string } | null> {
      const sessionHash = sha256Hex(sessionId);
      const [row] = await db
        .select({ user: users, expiresAt: sessions.expiresAt })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(eq(sessions.idHash, sessionHash));
      if (!row) return null;
      if (row.expiresAt <= clock.now()) {
        await db.delete(sessions).where(eq(sessions.idHash, sessionHash));
        return null;
      }
      return { user: row.user, sessionHash };
    },

    async logout(sessionId: string): Promise<void> {
      await db.delete(sessions).where(eq(sessions.idHash, sha256Hex(sessionId)));
    },

    async logoutAll(userId: string): Promise<void> {
      await db.delete(sessions).where(eq(sessions.userId, userId));
    },

    /** Changes the password, ends the account's other sessions and keeps the calling one. */
    async changePassword(user: UserRow, sessionHash: string, body: ChangePassword): Promise<UserRow> {
      if (!(await verifyPassword(body.current_password, user.passwordHash))) {
        throw badRequest("current_password is not the account's password");
      }
      checkPassword(body.new_password, 'new_password');
      if (body.new_password !== body.confirm_new_password) {
        throw badRequest('new_password and confirm_new_password differ');
      }
      if (body.new_password === body.current_password) {
        throw badRequest('new_password must differ from the current password');
      }
      const [row] = await db
        .update(users)
        .set({ passwordHash: await hashPassword(body.new_password), mustChangePassword: false })
        .where(eq(users.id, user.id))
        .returning();
      await db.delete(sessions).where(and(eq(sessions.userId, user.id), ne(sessions.idHash, sessionHash)));
      if (!row) throw unauthorized('the account no longer exists');
      return row;
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
