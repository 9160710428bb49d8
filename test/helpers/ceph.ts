// A real S3 endpoint for tests: a single-node Ceph RADOS Gateway started by
// test/helpers/ceph-s3/start-rgw.sh (from the lead's shared tools), one per test file, on free ports
// of its own so files can run in parallel. Without the ceph packages a suite is skipped,
// except in CI (CI=true), where that is a failure. Every gateway started here is stopped when
// the process exits, even if the test never called stop() (nothing survives SIGKILL).

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

const TOOLS = fileURLToPath(new URL('./ceph-s3', import.meta.url));
const START = `${TOOLS}/start-rgw.sh`;
const STOP = `${TOOLS}/stop-rgw.sh`;
const PROGRAMS = ['ceph-mon', 'ceph-osd', 'radosgw', 'ceph', 'curl'];

export interface CephS3 {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The gateway's temporary folder (removed by stop()). */
  dir: string;
  /** The variables a Station needs for a bucket on this gateway (STORAGE_URL=s3://bucket). */
  env(bucket: string, prefix?: string): Record<string, string>;
  stop(): Promise<void>;
}

export function cephAvailable(): boolean {
  if (!existsSync(START)) return false;
  return PROGRAMS.every((name) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0);
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const running = new Set<string>();
let exitHookInstalled = false;

function stopSync(dir: string): void {
  spawnSync(STOP, [dir], { stdio: 'ignore' });
  running.delete(dir);
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const dir of [...running]) stopSync(dir);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      for (const dir of [...running]) stopSync(dir);
      process.kill(process.pid, signal);
    });
  }
}

function exported(output: string, name: string): string {
  const match = new RegExp(`^export ${name}=['"]?([^'"\\n]*)['"]?$`, 'm').exec(output);
  if (!match?.[1]) throw new Error(`start-rgw.sh printed no ${name}:\n${output}`);
  return match[1];
}

/**
 * Starts a gateway (about 2 s, longer on a loaded machine); stop() it in `after`. The OSD keeps
 * data in memory (about twice what is stored, at most 4 GiB) unless `backend` is 'bluestore'
 * (a sparse 10 GiB file in the gateway's folder: for benches that store gigabytes).
 */
export async function startCeph(options: { backend?: 'memstore' | 'bluestore' } = {}): Promise<CephS3> {
  installExitHook();
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const env = {
      ...process.env,
      OSD_BACKEND: options.backend ?? 'memstore',
      RGW_PORT: String(await freePort()),
      MON_PORT: String(await freePort()),
    };
    try {
      const { stdout } = await execFileAsync(START, [], { env, timeout: 120_000 });
      const dir = exported(stdout, 'CEPH_DIR');
      running.add(dir);
      const ceph: CephS3 = {
        endpoint: exported(stdout, 'S3_ENDPOINT'),
        accessKeyId: exported(stdout, 'AWS_ACCESS_KEY_ID'),
        secretAccessKey: exported(stdout, 'AWS_SECRET_ACCESS_KEY'),
        region: 'us-east-1',
        dir,
        env: (bucket, prefix) => ({
          STORAGE_URL: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
          S3_ENDPOINT: ceph.endpoint,
          AWS_ACCESS_KEY_ID: ceph.accessKeyId,
          AWS_SECRET_ACCESS_KEY: ceph.secretAccessKey,
          AWS_REGION: ceph.region,
        }),
        async stop() {
          if (!running.has(dir)) return;
          running.delete(dir);
          await execFileAsync(STOP, [dir]).catch(() => undefined);
        },
      };
      return ceph;
    } catch (error) {
      // A port taken between freePort() and the daemon's bind: try other ports.
      lastError = error;
    }
  }
  throw new Error('the Ceph RADOS Gateway did not start (start-rgw.sh failed three times)', {
    cause: lastError,
  });
}

/**
 * Registers a suite that needs a gateway: `register` gets a function that starts one on first
 * use (shared by the file's tests). Skipped without ceph locally, a failure in CI.
 */
export function onCeph(label: string, register: (ceph: () => Promise<CephS3>) => void): void {
  const inCi = process.env.CI === 'true';
  if (!cephAvailable()) {
    if (!inCi) {
      test(label, {
        skip: 'Ceph is not installed (apt-get install ceph-mon ceph-osd radosgw ceph-common)',
      }, () => {});
      return;
    }
    test(`${label}: Ceph is available in CI`, () => {
      assert.fail(
        `CI=true but the Ceph RADOS Gateway (${PROGRAMS.join(', ')} and ${START}) is not available`,
      );
    });
    return;
  }
  let started: Promise<CephS3> | undefined;
  after(async () => {
    await (await started?.catch(() => undefined))?.stop();
  });
  register(() => {
    started ??= startCeph();
    return started;
  });
}
