import { and, eq, lte, ne } from 'drizzle-orm';
import { clock, DAY_MS } from '../clock.ts';
import type { CoreDb, CoreTables } from '../db/core-db.ts';
import { badRequest, tooManyRequests, unauthorized } from '../errors.ts';
import { logger } from '../log.ts';
import type { Accounts } from './accounts.ts';
import { checkPassword } from './accounts.ts';
import { addressBlock } from './address-block.ts';
import { type Limit, reserve, type Slot, type WindowCounter } from './rate-limit.ts';
import {
  DUMMY_PASSWORD_HASH,
  hashPassword,
  newSecret,
  outdatedHash,
  sha256Hex,
  verifyPassword,
} from './secrets.ts';
import type { UserRow } from './types.ts';

const log = logger.child({ mod: 'core/auth/sessions' });

export const SESSION_LIFETIME_MS = 7 * DAY_MS;
/** Failed sign-ins per client address, and per username from one address, in the window. */
const SIGN_IN_FAILURES = 10;
/**
 * Failed sign-ins for one username from all addresses together before the account is reported
 * as under attack. It never refuses: a limit that did would let anyone with 10 addresses lock
 * the owner out, so guessing is held back by the per-address limits alone (an IPv6 /64 counts
 * as one address) and the right password signs in from any address that is not itself limited.
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
  onlyFlags: true,
};

/** Where a sign-in comes from, for the limits and the log. */
export interface SignInSource {
  /** The client address (`clientAddress`): the limits count per its `addressBlock`. */
  client: string;
  /** The `Host` header the request named. */
  host: string;
}

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
     * address and per (username, address); the attempt is counted before the password is
     * checked (so parallel guesses cannot all slip past the limit while scrypt runs, on this
     * Station or another one on the same database) and taken back when it succeeds. Failures
     * per username from all addresses are counted too, but only reported: past that ceiling a
     * wrong password is still 401 (with a warning in the detail and the log) and the right one
     * still signs in. The password is checked with scrypt either way, so no answer is faster.
     */
    async login(
      username: string,
      password: string,
      from: SignInSource,
    ): Promise<{ sessionId: string; user: UserRow }> {
      const userKey = username.toLowerCase();
      const address = addressBlock(from.client);
      const slots: Slot[] = [
        [failuresByClient, address],
        [failuresByUserAndClient, `${address} ${userKey}`],
        [failuresByUser, userKey],
      ];
      const attempt = await reserve(windows, slots);
      if (!attempt.release) {
        const wait = attempt.wait;
        throw tooManyRequests(
          wait,
          `too many failed sign-ins from this address; try again in ${wait} seconds`,
        );
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
        const underAttack = attempt.flagged.length > 0;
        // The account's own name only when it exists: a mistyped password never reaches the log.
        log.warn(
          {
            client: from.client,
            host: from.host,
            ...(underAttack ? { account: user?.username ?? null } : {}),
          },
          underAttack
            ? `failed sign-in; over ${SIGN_IN_FAILURES_PER_USERNAME} failures for this username from all addresses in 15 minutes`
            : 'failed sign-in',
        );
        throw unauthorized(
          underAttack
            ? `wrong username or password; this account has had over ${SIGN_IN_FAILURES_PER_USERNAME} failed sign-ins in 15 minutes (the right password still signs in)`
            : 'wrong username or password',
        );
      }
      await attempt.release();
      if (outdatedHash(user.passwordHash)) {
        await db
          .update(users)
          .set({ passwordHash: await hashPassword(password) })
          .where(eq(users.id, user.id));
      }
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
