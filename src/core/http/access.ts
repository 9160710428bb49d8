import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Scope, UserRow } from '../auth/types.ts';
import { forbidden, unauthorized } from '../errors.ts';
import type { AppEnv } from './app-env.ts';

/**
 * Works out who is calling. A bearer token must be a valid automation token (an invalid
 * one is 401 even beside a valid cookie); otherwise the session cookie, if any.
 */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async function authenticate(c, next) {
    const core = c.get('core');
    const header = c.req.header('authorization');
    c.set('auth', null);
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match?.[1]) throw unauthorized('Authorization must be "Bearer <automation token>"');
      const { user, token, scopes } = await core.tokens.authenticate(match[1]);
      c.set('auth', { via: 'token', user, token, scopes });
    } else {
      const sessionId = getCookie(c, core.cookieName);
      const session = sessionId ? await core.sessions.resolve(sessionId) : null;
      if (session) c.set('auth', { via: 'session', ...session });
    }
    await next();
  };
}

export interface AccessRule {
  /** `session`: any signed-in account; `admin`: an admin account. */
  level: 'session' | 'admin';
  /**
   * The automation-token scope this route needs (`manage` covers every scope); `null` for
   * account, session and token controls, which automation tokens never reach.
   */
  scope: Scope | null;
  /** Routes a user who must change their password may still call. */
  duringPasswordChange?: boolean;
}

/** Guards a route: signed in, admin where needed, scope for tokens, password change done. */
export function requireAccess(rule: AccessRule): MiddlewareHandler<AppEnv> {
  return async function requireAccess(c, next) {
    const auth = c.get('auth');
    if (!auth) throw unauthorized('sign in required');
    if (auth.via === 'token') {
      if (rule.scope === null) {
        throw forbidden('automation tokens cannot use this route; sign in with an admin account');
      }
      if (!auth.scopes.includes(rule.scope) && !auth.scopes.includes('manage')) {
        throw forbidden(`this automation token lacks the "${rule.scope}" scope`);
      }
    } else if (auth.user.mustChangePassword && !rule.duringPasswordChange) {
      throw forbidden(
        'password change required: POST /api/session/change-password first',
        'password_change_required',
      );
    }
    if (rule.level === 'admin' && !auth.user.isAdmin) throw forbidden('admin access required');
    await next();
  };
}

export const signedIn = (scope: Scope | null, extra: Partial<AccessRule> = {}) =>
  requireAccess({ level: 'session', scope, ...extra });
export const adminOnly = (scope: Scope | null, extra: Partial<AccessRule> = {}) =>
  requireAccess({ level: 'admin', scope, ...extra });

/** The signed-in account of a guarded route. */
export function currentUser(c: Context<AppEnv>): UserRow {
  const auth = c.get('auth');
  if (!auth) throw unauthorized('sign in required');
  return auth.user;
}

/**
 * Settings are for sessions and `manage` tokens; a `read` token never sees them. Where they
 * hold a secret (the Scout's `scout_credential`), `adminOnly` keeps them from non-admins too.
 */
export function maySeeSettings(c: Context<AppEnv>, options: { adminOnly?: boolean } = {}): boolean {
  const auth = c.get('auth');
  if (auth?.via === 'token') return auth.scopes.includes('manage');
  return auth?.via === 'session' && (!options.adminOnly || auth.user.isAdmin);
}
