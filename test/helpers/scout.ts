// Scouts in tests: starting one on a fresh scan root, wiring it to a Station (a Station token
// in its settings), and reading its status, job states and staging folder while cycles run.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DirectoryList, JobStateView } from '../../src/shared/protocol/scout-jobs.ts';
import type { ScoutStatus } from '../../src/shared/protocol/scout-status.ts';
import { expectStatus } from './assertions.ts';
import { adminClient, type Client } from './http.ts';
import { type ServerOptions, startServer, type TestServer } from './server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Starting and wiring

/** A fresh Scout data dir with an empty scan root at `<dataDir>/scan` (the default SCAN_ROOT). */
export function scoutDataDir(prefix = 'backupd-scout-'): { dataDir: string; scanRoot: string } {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const scanRoot = join(dataDir, 'scan');
  mkdirSync(scanRoot, { recursive: true });
  return { dataDir, scanRoot };
}

export interface ScoutOptions {
  /** The data dir's name prefix in the temp dir. */
  prefix?: string;
  /** Fills the scan root before the Scout starts. */
  fill?: (scanRoot: string) => void;
  /** Extra environment; the object is kept, so a restart sees later changes. */
  env?: Record<string, string>;
}

export interface RunningScout {
  server: TestServer;
  /** A signed-in admin session. */
  admin: Client;
  scanRoot: string;
}

/** Starts a Scout on a fresh data dir (scan root filled by `fill`) and signs in as admin. */
export async function startScout(options: ScoutOptions = {}): Promise<RunningScout> {
  const { dataDir, scanRoot } = scoutDataDir(options.prefix);
  options.fill?.(scanRoot);
  const server = await startServer('scout', { dataDir, env: options.env });
  return { server, admin: await adminClient(server.url), scanRoot };
}

/** Starts a Station and signs in as admin. */
export async function startStation(
  options: ServerOptions = {},
): Promise<{ server: TestServer; admin: Client }> {
  const server = await startServer('station', options);
  return { server, admin: await adminClient(server.url) };
}

/** Mints a Station token (POST /api/credentials/mint) through a Station admin session. */
export async function mintStationToken(stationAdmin: Client): Promise<string> {
  const reply = await stationAdmin.post('/api/credentials/mint', {});
  expectStatus(reply, 201);
  return reply.body.credential;
}

/** Saves the Station address, a Station token and the Scout ID as the Scout's settings. */
export async function saveStationSettings(
  scoutAdmin: Client,
  stationUrl: string,
  credential: string,
  scoutId: string,
): Promise<void> {
  const reply = await scoutAdmin.post('/api/settings', {
    station_url: stationUrl,
    scout_credential: credential,
    scout_id: scoutId,
  });
  expectStatus(reply, 200);
  assert.equal(reply.body.settings?.station_url, stationUrl);
}

/** Wires a Scout to a Station: mints a Station token and saves it in the Scout's settings. */
export async function connectScout(
  scoutAdmin: Client,
  stationAdmin: Client,
  scoutId: string,
): Promise<string> {
  const credential = await mintStationToken(stationAdmin);
  await saveStationSettings(scoutAdmin, stationAdmin.baseUrl, credential, scoutId);
  return credential;
}

// ---------------------------------------------------------------------------------------------
// Status, cycles and job states

export async function scoutStatus(admin: Client): Promise<ScoutStatus> {
  const reply = await admin.get<ScoutStatus>('/api/status');
  expectStatus(reply, 200);
  return reply.body;
}

export interface WaitOptions {
  /** How long to wait at the most; 30 s by default. */
  timeoutMs?: number;
  /** Pause between two status reads; 50 ms by default. */
  intervalMs?: number;
}

/** Waits until no operation runs and no run-now is pending; returns that status. */
export async function waitIdle(admin: Client, options: WaitOptions = {}): Promise<ScoutStatus> {
  const { timeoutMs = 30_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await scoutStatus(admin);
    if (status.operation === null && !status.run_now_requested) return status;
    if (Date.now() >= deadline) throw new Error(`the Scout did not become idle in ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** POST /api/run-now (queued), then waits until the cycle is over; returns the idle status. */
export async function runNow(admin: Client, options: WaitOptions = {}): Promise<ScoutStatus> {
  const reply = await admin.post('/api/run-now');
  expectStatus(reply, 200);
  assert.equal(reply.body.status, 'queued');
  return waitIdle(admin, options);
}

/**
 * Runs `work` while moving the Scout's clock past each upload retry wait it logs from `since` (a
 * place in its output; now by default): the uploader waits on the clock
 * (src/scout/upload/uploader.ts), so the test does not sit the backoff out.
 */
export async function passingUploadWaits<T>(
  scout: TestServer,
  work: () => Promise<T>,
  since = scout.output().length,
): Promise<T> {
  let from = since;
  const pass = () => {
    const output = scout.output();
    const end = output.lastIndexOf('\n') + 1;
    for (const line of output.slice(from, Math.max(from, end)).split('\n')) {
      if (line.includes('"msg":"upload interrupted; retrying"'))
        scout.advanceClock(Number(JSON.parse(line).wait) * 1000);
    }
    from = Math.max(from, end);
  };
  const timer = setInterval(pass, 20);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** The local state of the job at `relativePath` (which must be listed). */
export async function jobState(admin: Client, relativePath: string): Promise<JobStateView> {
  const reply = await admin.get<DirectoryList>('/api/directories');
  expectStatus(reply, 200);
  const found = reply.body.directories.find((d) => d.relative_path === relativePath);
  assert.ok(found, `${relativePath} is listed`);
  return found.state;
}

/** Runs a cycle and returns the name the Station stored the job's new snapshot as. */
export async function backupJob(
  admin: Client,
  relativePath: string,
  options: WaitOptions = {},
): Promise<string> {
  await runNow(admin, options);
  const state = await jobState(admin, relativePath);
  assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
  return String(state.last_stored_as);
}

/** The file names in a Scout's staging folder (none when it does not exist yet). */
export function stagedFiles(dataDir: string): string[] {
  try {
    return readdirSync(join(dataDir, 'staging'));
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// What the Station holds

/** The snapshot names the Station lists for `job` (of every Scout, or of `scoutId` only). */
export async function snapshotsOf(stationAdmin: Client, job: string, scoutId?: string): Promise<string[]> {
  const overview = await stationAdmin.get('/api/overview?section=snapshots');
  expectStatus(overview, 200);
  const names: string[] = [];
  for (const s of overview.body.scouts) {
    if (scoutId !== undefined && s.scout_id !== scoutId) continue;
    for (const i of s.instances)
      for (const j of i.jobs)
        if (j.job_name === job) names.push(...j.snapshots.map((x: { name: string }) => x.name));
  }
  return names;
}
