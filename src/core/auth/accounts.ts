import { and, asc, eq, gt, or, sql } from 'drizzle-orm';
import { clock } from '../clock.ts';
import type { CoreDb, CoreTables } from '../db/core-db.ts';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { logger } from '../log.ts';
import { hashPassword, newId } from './secrets.ts';
import { type PublicUser, publicUser, type UserRow } from './types.ts';

const log = logger.child({ mod: 'core/auth/accounts' });

export const MIN_PASSWORD_LENGTH = 8;
const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;

export function checkPassword(password: string, field = 'password'): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw badRequest(`${field} must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
}

function checkUsername(username: string): void {
  if (!USERNAME.test(username)) {
    throw badRequest('username must be 1 to 64 characters of letters, digits, ".", "_", "@" or "-"');
  }
}

export interface AccountUpdate {
  username?: string;
  password?: string;
  is_admin?: boolean;
}

export function createAccounts(db: CoreDb, { users, sessions }: CoreTables) {
  const otherAdminsExist = (id: string) =>
    gt(sql`(SELECT count(*) FROM ${users} WHERE ${users.isAdmin} AND ${users.id} <> ${id})`, 0);

  async function byId(id: string): Promise<UserRow | undefined> {
    const [row] = await db.select().from(users).where(eq(users.id, id));
    return row;
  }

  async function byUsername(username: string): Promise<UserRow | undefined> {
    const [row] = await db.select().from(users).where(eq(users.username, username));
    return row;
  }

  async function requireUser(id: string): Promise<UserRow> {
    const user = await byId(id);
    if (!user) throw notFound(`no account with id ${id}`);
    return user;
  }

  async function usernameFree(username: string, exceptId?: string): Promise<void> {
    const existing = await byUsername(username);
    if (existing && existing.id !== exceptId) throw conflict(`an account named "${username}" already exists`);
  }

  return {
    byId,
    byUsername,

    /** On an empty database, create `admin` with the initial password; it must be changed at first sign-in. */
    async ensureInitialAdmin(initialPassword: string): Promise<void> {
      const [{ count } = { count: 0 }] = await db.select({ count: sql<number>`count(*)` }).from(users);
      if (Number(count) > 0) return;
      await db
        .insert(users)
        .values({
          id: newId(),
          username: 'admin',
          passwordHash: await hashPassword(initialPassword),
          isAdmin: true,
          mustChangePassword: true,
          createdAt: clock.now(),
        })
        .onConflictDoNothing();
      log.info('created the initial admin account "admin"');
    },

    async list(viewer: UserRow): Promise<PublicUser[]> {
      if (!viewer.isAdmin) return [publicUser(viewer)];
      const rows = await db.select().from(users).orderBy(asc(users.createdAt), asc(users.username));
      return rows.map(publicUser);
    },

    async create(input: { username: string; password: string; is_admin: boolean }): Promise<PublicUser> {
      checkUsername(input.username);
      checkPassword(input.password);
      await usernameFree(input.username);
      const [row] = await db
        .insert(users)
        .values({
          id: newId(),
          username: input.username,
          passwordHash: await hashPassword(input.password),
          isAdmin: input.is_admin,
          // The admin chose this password; the new operator picks their own at first sign-in.
          mustChangePassword: true,
          createdAt: clock.now(),
        })
        .onConflictDoNothing()
        .returning();
      if (!row) throw conflict(`an account named "${input.username}" already exists`);
      return publicUser(row);
    },

    async update(viewer: UserRow, id: string, patch: AccountUpdate): Promise<PublicUser> {
      const own = viewer.id === id;
      if (!own && !viewer.isAdmin) throw forbidden('only an admin can change another account');
      const target = await requireUser(id);
      const changes: Partial<UserRow> = {};
      if (patch.username !== undefined && patch.username !== target.username) {
        checkUsername(patch.username);
        await usernameFree(patch.username, id);
        changes.username = patch.username;
      }
      if (patch.is_admin !== undefined && patch.is_admin !== target.isAdmin) {
        if (!viewer.isAdmin) throw forbidden('only an admin can change admin access');
        changes.isAdmin = patch.is_admin;
      }
      if (patch.password !== undefined) {
        if (own) throw badRequest('change your own password with POST /api/session/change-password');
        checkPassword(patch.password);
        changes.passwordHash = await hashPassword(patch.password);
        changes.mustChangePassword = true;
      }
      if (Object.keys(changes).length === 0) return publicUser(target);
      // Demotion happens in the same statement as the last-admin check, so two demotions cannot race past it.
      const guard =
        changes.isAdmin === false ? and(eq(users.id, id), otherAdminsExist(id)) : eq(users.id, id);
      const [row] = await db.update(users).set(changes).where(guard).returning();
      if (!row)
        throw conflict('the last admin account cannot lose admin access; make another account admin first');
      if (changes.passwordHash) await db.delete(sessions).where(eq(sessions.userId, id));
      return publicUser(row);
    },

    async remove(id: string): Promise<void> {
      await requireUser(id);
      const [row] = await db
        .delete(users)
        .where(and(eq(users.id, id), or(eq(users.isAdmin, false), otherAdminsExist(id))))
        .returning({ id: users.id });
      if (!row) throw conflict('the last admin account cannot be deleted; make another account admin first');
    },
  };
}

export type Accounts = ReturnType<typeof createAccounts>;
