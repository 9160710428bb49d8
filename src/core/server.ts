import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { lockDataDir } from './data-dir-lock.ts';
import { announce, firstRunLine } from './first-run.ts';
import type { AppEnv } from './http/app-env.ts';
import { logger } from './log.ts';
import { makeDataDirPrivate } from './private-files.ts';

const log = logger.child({ mod: 'core/server' });
const STOP_TIMEOUT_MS = 9_000;

export interface RunningRole {
  app: Hono<AppEnv>;
  /** Stops background work and closes the database. */
  close(): Promise<void>;
}

function listen(app: Hono<AppEnv>, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }) as Server;
    server.once('listening', () => resolve(server));
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`port ${port} on ${host} is already in use; choose another with --port`)
          : error,
      );
    });
  });
}

/**
 * Runs one role until SIGTERM or SIGINT: takes the data dir, makes it private to this user,
 * starts the role, listens, and on a signal lets in-flight requests finish, closes the role
 * and releases the data dir.
 */
export async function serveRole(options: {
  role: 'station' | 'scout';
  host: string;
  port: number;
  dataDir: string;
  /** Folders that may lie inside the data dir but whose modes are not backupd's (the scan root). */
  notPrivate?: string[];
  start: () => Promise<RunningRole>;
  /** A sentence for the person at the terminal after where to sign in (src/core/first-run.ts). */
  note?: () => Promise<string | undefined>;
}): Promise<void> {
  const lock = lockDataDir(options.dataDir);
  let role: RunningRole;
  let server: Server;
  try {
    makeDataDirPrivate(options.dataDir, options.notPrivate);
    role = await options.start();
    server = await listen(role.app, options.host, options.port);
  } catch (error) {
    lock.release();
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  log.info(
    { role: options.role, host: options.host, port, data_dir: options.dataDir },
    `${options.role} listening`,
  );
  announce(firstRunLine(options.role, options.host, port, await options.note?.()));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    const force = setTimeout(() => {
      log.error('in-flight work did not finish in time; exiting');
      lock.release();
      process.exit(1);
    }, STOP_TIMEOUT_MS);
    force.unref();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const lingering = setTimeout(() => server.closeAllConnections(), STOP_TIMEOUT_MS - 2_000);
    lingering.unref();
    await closed;
    try {
      await role.close();
    } catch (error) {
      log.error({ err: error }, 'error while closing');
    }
    lock.release();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
