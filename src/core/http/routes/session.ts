import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import {
  ChangePasswordRequestSchema,
  LoginRequestSchema,
  type SessionMe,
  type SignedIn,
  type StatusOk,
} from '../../../shared/protocol/accounts.ts';
import { tokenMetadata } from '../../auth/automation-tokens.ts';
import { SESSION_LIFETIME_MS } from '../../auth/sessions.ts';
import { publicUser } from '../../auth/types.ts';
import { unauthorized } from '../../errors.ts';
import { signedIn } from '../access.ts';
import type { AppEnv } from '../app-env.ts';
import { clientAddress } from '../client-address.ts';
import { readJson } from '../json-body.ts';

function isHttps(url: string, forwardedProto: string | undefined): boolean {
  return url.startsWith('https:') || forwardedProto?.split(',')[0]?.trim() === 'https';
}

export function sessionRoutes() {
  const app = new Hono<AppEnv>();

  app.post('/login', async (c) => {
    const body = await readJson(c, LoginRequestSchema);
    const core = c.get('core');
    const { sessionId, user } = await core.sessions.login(body.username, body.password, {
      client: clientAddress(c),
      host: (c.req.header('host') ?? '').slice(0, 200),
    });
    setCookie(c, core.cookieName, sessionId, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      secure: isHttps(c.req.url, c.req.header('x-forwarded-proto')),
      maxAge: Math.floor(SESSION_LIFETIME_MS / 1000),
    });
    return c.json({ status: 'ok', user: publicUser(user) } satisfies SignedIn);
  });

  app.get('/me', (c) => {
    const auth = c.get('auth');
    if (!auth) return c.json({ authenticated: false, user: null } satisfies SessionMe);
    return c.json({
      authenticated: true,
      user: publicUser(auth.user),
      ...(auth.via === 'token' ? { automation_token: tokenMetadata(auth.token) } : {}),
    } satisfies SessionMe);
  });

  app.post('/change-password', signedIn(null, { duringPasswordChange: true }), async (c) => {
    const body = await readJson(c, ChangePasswordRequestSchema);
    const auth = c.get('auth');
    if (auth?.via !== 'session') throw unauthorized('sign in required');
    const user = await c.get('core').sessions.changePassword(auth.user, auth.sessionHash, body);
    return c.json({ status: 'ok', user: publicUser(user) } satisfies SignedIn);
  });

  app.post('/logout', async (c) => {
    const core = c.get('core');
    const sessionId = getCookie(c, core.cookieName);
    if (sessionId) await core.sessions.logout(sessionId);
    deleteCookie(c, core.cookieName, { path: '/' });
    return c.json({ status: 'ok' } satisfies StatusOk);
  });

  app.post('/logout-all', signedIn(null, { duringPasswordChange: true }), async (c) => {
    const core = c.get('core');
    const auth = c.get('auth');
    if (auth) await core.sessions.logoutAll(auth.user.id);
    deleteCookie(c, core.cookieName, { path: '/' });
    return c.json({ status: 'ok' } satisfies StatusOk);
  });

  return app;
}
