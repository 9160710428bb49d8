// One Station and one Scout for a whole test file: started in `before`, disposed in `after`.
import { after, before } from 'node:test';
import { type Role, type ServerOptions, startServer, type TestServer } from './server.ts';

/** Starts both roles (in parallel) with their options; read a server inside a test: `servers.scout`. */
export function bothRoles(
  options: Partial<Record<Role, ServerOptions>> = {},
): Partial<Record<Role, TestServer>> {
  const servers: Partial<Record<Role, TestServer>> = {};
  before(async () => {
    const started = await Promise.allSettled([
      startServer('station', options.station),
      startServer('scout', options.scout),
    ]);
    if (started[0].status === 'fulfilled') servers.station = started[0].value;
    if (started[1].status === 'fulfilled') servers.scout = started[1].value;
    for (const r of started) if (r.status === 'rejected') throw r.reason;
  });
  after(async () => {
    await Promise.all([servers.station?.dispose(), servers.scout?.dispose()]);
  });
  return servers;
}
