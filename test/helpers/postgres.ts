// Throwaway PostgreSQL servers for tests.
//
// startPostgres() runs initdb + pg_ctl on a fresh temporary folder and returns a
// connection URL; createDatabase() gives each test file its own empty database
// on one shared server. When the process runs as root (CI, containers), the
// PostgreSQL programs are run as the `postgres` system user via runuser, since
// PostgreSQL refuses to run as root.
//
// Every server started here is stopped again when the process exits or is
// ended by SIGINT/SIGTERM/SIGHUP, even if the test never called stop().
// (Nothing can clean up after SIGKILL.)

import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, realpathSync, rmSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';

const execFileAsync = promisify(execFile);

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust auth, no password). */
  url: string;
  port: number;
  /** Temporary folder holding the data directory, log file and socket. Removed by stop(). */
  dir: string;
  /** Stops the server (immediate mode) and removes `dir`. Safe to call more than once. */
  stop(): Promise<void>;
}

interface Binaries {
  initdb: string;
  pgCtl: string;
}

interface RunAs {
  /** Command prefix that runs a program as the postgres user, or [] when not root. */
  prefix: string[];
  uid: number;
  gid: number;
}

interface Running {
  pgCtl: string;
  dataDir: string;
  dir: string;
  runAs: RunAs;
}

const INSTALL_HINT =
  "Install Debian's `postgresql` package (apt-get install -y postgresql) " +
  'or put initdb and pg_ctl on PATH.';

const START_ATTEMPTS = 3;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    // Resolve symlinks so the postgres user can reach the real binary even if
    // the link lives somewhere it cannot read (and so initdb finds `postgres`
    // next to itself).
    if (isExecutable(candidate)) return realpathSync(candidate);
  }
  return undefined;
}

function compareVersionsDesc(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pb[i] ?? 0) - (pa[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function findBinaries(): Binaries | undefined {
  const initdb = onPath('initdb');
  const pgCtl = onPath('pg_ctl');
  if (initdb !== undefined && pgCtl !== undefined) return { initdb, pgCtl };

  const root = '/usr/lib/postgresql';
  let versions: string[];
  try {
    versions = readdirSync(root).filter((v) => /^\d+(\.\d+)*$/.test(v));
  } catch {
    return undefined;
  }
  for (const version of versions.sort(compareVersionsDesc)) {
    const bin = join(root, version, 'bin');
    const candidate = { initdb: join(bin, 'initdb'), pgCtl: join(bin, 'pg_ctl') };
    if (isExecutable(candidate.initdb) && isExecutable(candidate.pgCtl)) return candidate;
  }
  return undefined;
}

function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/**
 * True when startPostgres() can be expected to work: the server programs are
 * installed and, when running as root, runuser and a `postgres` user exist.
 */
export function postgresAvailable(): boolean {
  if (findBinaries() === undefined) return false;
  if (!isRoot()) return true;
  const id = spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
  const runuser = spawnSync('runuser', ['--help'], { stdio: 'ignore' });
  return id.status === 0 && runuser.status === 0;
}

async function idOf(flag: '-u' | '-g'): Promise<number> {
  const { stdout } = await execFileAsync('id', [flag, 'postgres']);
  const n = Number.parseInt(stdout.trim(), 10);
  if (!Number.isInteger(n)) throw new Error(`unexpected output from id ${flag} postgres: ${stdout}`);
  return n;
}

async function resolveRunAs(): Promise<RunAs> {
  if (!isRoot()) return { prefix: [], uid: -1, gid: -1 };
  let uid: number;
  let gid: number;
  try {
    [uid, gid] = await Promise.all([idOf('-u'), idOf('-g')]);
  } catch (cause) {
    throw new Error(
      `Running as root, but there is no \`postgres\` user to run PostgreSQL as. ${INSTALL_HINT}`,
      { cause },
    );
  }
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid, gid };
}

/** Runs a PostgreSQL program (as the postgres user when root); rejects with its output on failure. */
async function run(runAs: RunAs, bin: string, args: string[], cwd: string): Promise<string> {
  const [file, ...rest] = [...runAs.prefix, bin, ...args];
  try {
    const { stdout, stderr } = await execFileAsync(file as string, rest, {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout + stderr;
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${[file, ...rest].join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.trim(),
      { cause: error },
    );
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Quotes a value for the /bin/sh command line that pg_ctl builds from its -o option. */
function shQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

const running = new Set<Running>();
let cleanupInstalled = false;

function stopSync(server: Running): void {
  running.delete(server);
  const [file, ...rest] = [
    ...server.runAs.prefix,
    server.pgCtl,
    '-D',
    server.dataDir,
    '-m',
    'immediate',
    '-w',
    'stop',
  ];
  spawnSync(file as string, rest, { cwd: server.dir, stdio: 'ignore', timeout: 10_000 });
  rmSync(server.dir, { recursive: true, force: true });
}

function stopAllSync(): void {
  for (const server of [...running]) stopSync(server);
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', stopAllSync);
  // A signal ends the process without emitting 'exit'. Stop our servers, then,
  // unless someone else also handles the signal, die from it as we would have.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      stopAllSync();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/**
 * Starts a throwaway PostgreSQL server on a free port of 127.0.0.1.
 * Throws if PostgreSQL is not installed (see postgresAvailable()).
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bins = findBinaries();
  if (bins === undefined) {
    throw new Error(
      `PostgreSQL server programs (initdb, pg_ctl) not found on PATH or in /usr/lib/postgresql/*/bin. ${INSTALL_HINT}`,
    );
  }
  const runAs = await resolveRunAs();

  const dir = await mkdtemp(join(tmpdir(), 'backupd-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  try {
    if (runAs.prefix.length > 0) await chown(dir, runAs.uid, runAs.gid);
    await run(
      runAs,
      bins.initdb,
      ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8'],
      dir,
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  installCleanup();
  const server: Running = { pgCtl: bins.pgCtl, dataDir, dir, runAs };

  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const logOffset = await stat(logFile).then(
      (s) => s.size,
      () => 0,
    );
    const options = [
      `-p ${port}`,
      `-k ${shQuote(dir)}`,
      '-h 127.0.0.1',
      '-c fsync=off',
      '-c shared_buffers=16MB',
      '-c max_connections=50',
    ].join(' ');
    // Registered before starting, so a crash mid-start still stops the server.
    running.add(server);
    try {
      await run(
        runAs,
        bins.pgCtl,
        ['-w', '-t', '30', '-D', dataDir, '-l', logFile, '-o', options, 'start'],
        dir,
      );
    } catch (error) {
      const log = await readFile(logFile, 'utf8').then(
        (text) => text.slice(logOffset),
        () => '',
      );
      lastError = new Error(`${(error as Error).message}\n--- ${logFile} ---\n${log}`.trim(), {
        cause: error,
      });
      if (
        /address already in use|could not create any TCP\/IP sockets/i.test(log) &&
        attempt < START_ATTEMPTS
      ) {
        continue;
      }
      break;
    }

    let stopped: Promise<void> | undefined;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      dir,
      stop() {
        stopped ??= (async () => {
          running.delete(server);
          try {
            await run(runAs, bins.pgCtl, ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], dir);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        })();
        return stopped;
      },
    };
  }

  stopSync(server); // in case a postmaster is half up; also removes dir
  throw lastError;
}

/**
 * Creates an empty database called `name` on the server at `url` (dropping any
 * existing one of that name first) and returns its URL.
 */
export async function createDatabase(url: string, name: string): Promise<string> {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new Error(`invalid database name ${JSON.stringify(name)}: use letters, digits and _`);
  }
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`drop database if exists ${sql(name)} with (force)`;
    await sql`create database ${sql(name)}`;
  } finally {
    await sql.end();
  }
  const result = new URL(url);
  result.pathname = `/${name}`;
  return result.toString();
}

/**
 * Ends every upload lease in the database of a Station on PostgreSQL (nothing on PGlite): what a
 * minute of the database's clock does to the leases of a Station that was killed holding them.
 */
export async function lapseUploadLeases(station: { env: Record<string, string> }): Promise<void> {
  const url = station.env.DATABASE_URL;
  if (!url) return;
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`UPDATE leases SET until = 0 WHERE name LIKE 'upload:%'`;
  } finally {
    await sql.end();
  }
}
