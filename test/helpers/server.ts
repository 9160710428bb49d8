// Real server processes on free ports for HTTP tests.
//
// startServer('station' | 'scout', options) spawns `node src/main.ts <role> serve` (or the
// built bundle with `entry: 'dist'`) on a free port with its own data dir and a clock file,
// waits until GET /health answers 200, and returns handles to talk to it, move its clock,
// stop it (SIGTERM), kill it (SIGKILL) and start it again on the same data dir.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedPgliteCluster } from './pglite-template.ts';

export type Role = 'station' | 'scout';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRIES = { source: join(ROOT, 'src/main.ts'), dist: join(ROOT, 'dist/backupd.mjs') };

export interface ServerOptions {
  /** Extra environment (DATABASE_URL, INITIAL_ADMIN_PASSWORD, SCAN_ROOT, …). */
  env?: Record<string, string>;
  /** Reuse a data dir (to test persistence); a fresh temp dir otherwise. */
  dataDir?: string;
  entry?: 'source' | 'dist';
  /** Run this single executable (dist/backupd or a copy) instead of node with an entry. */
  executable?: string;
  /** Working directory of the process; the data dir's parent by default. */
  cwd?: string;
  /** How long it may take to answer /health (60 s by default; more under CPU emulation). */
  readyTimeoutMs?: number;
  /** A Station on PGlite runs its own initdb instead of starting from the template cluster. */
  freshCluster?: boolean;
}

export interface TestServer {
  role: Role;
  url: string;
  port: number;
  dataDir: string;
  pid: number;
  /** The extra environment it was started with (DATABASE_URL, …). */
  env: Record<string, string>;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Moves the server's clock forward (the offset accumulates). */
  advanceClock(ms: number): void;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  /** Starts the same role again on the same data dir, port and clock. */
  restart(): Promise<TestServer>;
  /** Stops (if running) and removes the data dir. */
  dispose(): Promise<void>;
}

/**
 * TEST_STORAGE_URL=s3://bucket runs every Station on S3, each in its own prefix (its data dir's
 * name): the STORAGE_URL of the Station on `dataDir`, undefined when Stations use the disk.
 */
export function testStorageUrl(dataDir: string): string | undefined {
  const base = process.env.TEST_STORAGE_URL;
  return base ? `${base}/${basename(dataDir)}` : undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function waitForHealth(
  url: string,
  child: ChildProcess,
  output: () => string,
  // TEST_READY_TIMEOUT_MS: more time on a machine shared with other work (PGlite's initdb is CPU-bound).
  timeoutMs = Number(process.env.TEST_READY_TIMEOUT_MS) || 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `server exited with ${child.exitCode ?? child.signalCode} before it was ready:\n${output()}`,
      );
    }
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become ready in ${timeoutMs / 1000} s:\n${output()}`);
}

/** How to start backupd with `args`: node with the source or the bundle, or an executable. */
function commandLine(options: Pick<ServerOptions, 'entry' | 'executable'>, args: string[]): string[] {
  if (options.executable) return [options.executable, ...args];
  return [process.execPath, ENTRIES[options.entry ?? 'source'], ...args];
}

/** Runs `backupd` once (not a server) and collects its exit code and output. */
export async function runBackupd(
  args: string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    /** Written to its standard input. */
    input?: string;
  } & Pick<ServerOptions, 'entry' | 'executable'> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [command, ...rest] = commandLine(options, args);
  const child = spawn(command ?? process.execPath, rest, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(options.input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const code = await exited(child);
  return { code, stdout, stderr };
}

export async function startServer(role: Role, options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `backupd-${role}-`));
  const clockFile = join(dataDir, '..', `${dataDir.split('/').pop()}.clock`);
  // A reused data dir keeps the clock it had; appending would turn 901000 into 9010000.
  if (!existsSync(clockFile)) writeFileSync(clockFile, '0');
  const embedded = role === 'station' && !options.env?.DATABASE_URL;
  if (embedded && !options.executable && !options.freshCluster) seedPgliteCluster(ROOT, dataDir);
  const port = await freePort();
  return launch(role, { ...options, dataDir }, port, clockFile);
}

async function launch(
  role: Role,
  options: ServerOptions & { dataDir: string },
  port: number,
  clockFile: string,
) {
  const url = `http://127.0.0.1:${port}`;
  let log = '';
  const [command, ...args] = commandLine(options, [role, 'serve']);
  const child = spawn(command ?? process.execPath, args, {
    cwd: options.cwd ?? join(options.dataDir, '..'),
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: options.dataDir,
      BACKUPD_TEST_CLOCK_FILE: clockFile,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'info',
      // Scheduled cycles would race the tests' own run-now (the default fires every hour):
      // schedule them for a leap day's midnight; tests that test the scheduler set their own.
      ...(role === 'scout' ? { SCAN_ROOT: join(options.dataDir, 'scan'), CRON_SCHEDULE: '0 0 29 2 *' } : {}),
      // Test Stations keep the last 30 (the default before calendar retention), so suites that
      // store many snapshots of one job keep them; test/station/retention/retention-suite.ts sets '' to
      // test a new Station's defaults.
      ...(role === 'station' ? { RETENTION_KEEP_LAST: '30' } : {}),
      ...(role === 'station' && testStorageUrl(options.dataDir)
        ? { STORAGE_URL: testStorageUrl(options.dataDir) ?? '' }
        : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => {
    log += d;
  });
  child.stderr?.on('data', (d) => {
    log += d;
  });
  const output = () => log;
  await waitForHealth(url, child, output, options.readyTimeoutMs);
  const server: TestServer = {
    role,
    url,
    port,
    dataDir: options.dataDir,
    pid: child.pid ?? 0,
    env: options.env ?? {},
    output,
    advanceClock(ms) {
      let current = 0;
      try {
        current = Number(readFileSync(clockFile, 'utf8')) || 0;
      } catch {
        current = 0;
      }
      writeFileSync(clockFile, String(current + ms));
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited(child);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited(child);
    },
    async restart() {
      await server.stop();
      return launch(role, options, port, clockFile);
    },
    async dispose() {
      await server.stop();
      rmSync(options.dataDir, { recursive: true, force: true });
      rmSync(clockFile, { force: true });
    },
  };
  return server;
}
