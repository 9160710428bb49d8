import { Hono } from 'hono';
import {
  CreateUserRequestSchema,
  type Removed,
  UpdateUserRequestSchema,
  type UserList,
  type UserReply,
} from '../../../shared/protocol/accounts.ts';
import { buildInfo } from '../../build-info.ts';
import { adminOnly, currentUser, signedIn } from '../access.ts';
import type { AppEnv } from '../app-env.ts';
import { readJson } from '../json-body.ts';

export function userRoutes() {
  const app = new Hono<AppEnv>();

  app.get('/', signedIn(null), async (c) => {
    const users = await c.get('core').accounts.list(currentUser(c));
    return c.json({ users, build: buildInfo } satisfies UserList);
  });

  app.post('/', adminOnly(null), async (c) => {
    const body = await readJson(c, CreateUserRequestSchema);
    return c.json({ user: await c.get('core').accounts.create(body) } satisfies UserReply, 201);
  });

  app.put('/:userId', signedIn(null), async (c) => {
    const body = await readJson(c, UpdateUserRequestSchema);
    const user = await c.get('core').accounts.update(currentUser(c), c.req.param('userId'), body);
    return c.json({ user } satisfies UserReply);
  });

  app.delete('/:userId', adminOnly(null), async (c) => {
    const id = c.req.param('userId');
    await c.get('core').accounts.remove(id);
    return c.json({ status: 'deleted', id } satisfies Removed);
  });

  return app;
}
