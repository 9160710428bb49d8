// The linux-arm64 single executable (dist/backupd-linux-arm64, built by `npm run build`) under
// qemu-aarch64-static, called explicitly (no binfmt_misc registration needed), with the arm64
// libc from multiarch: --version names arm64, a Station on the embedded database becomes
// healthy, a Scout backs a tiny job up to it and `backupd scout restore` brings it back byte
// for byte. Emulation is slow (the Station's first start, PGlite's initdb, takes ~40 s of CPU
// and minutes on a busy machine): the data stays tiny and every wait is generous but bounded.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTree, jobTree } from '../helpers/files.ts';
import { adminClient } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { backupJob, connectScout } from '../helpers/scout.ts';
import { ROOT, runBackupd, startServer, type TestServer } from '../helpers/server.ts';

const BUILT = join(ROOT, 'dist', 'backupd-linux-arm64');
const QEMU = 'qemu-aarch64-static';
const ARM64_LOADER = '/lib/ld-linux-aarch64.so.1';
const JOB = 'notes';
const EMULATED_READY_MS = 300_000;
const skip = process.platform !== 'linux' ? 'the executables are for Linux' : skipUnlessPrograms([QEMU]);

/** The ELF machine of `file`: 183 is AArch64, 62 is x86-64. */
function elfMachine(file: string): number {
  const header = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt16LE(18);
}

/** SIGTERM, and SIGKILL if the emulated process has not stopped within 30 s; then its data goes. */
async function shutDown(server: TestServer | undefined): Promise<void> {
  if (!server) return;
  const timer = setTimeout(() => void server.kill(), 30_000);
  await server.stop();
  clearTimeout(timer);
  await server.dispose();
}

describe('dist/backupd-linux-arm64 under qemu-aarch64-static', { skip, timeout: 540_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'backupd-arm64-'));
  // The executable, run through qemu by a two-line wrapper the test servers start.
  const executable = join(work, 'backupd');
  const env = { STATION_URL: '', SCOUT_CREDENTIAL: '', SCOUT_ID: '' };
  let station: TestServer;
  let scout: TestServer;
  let source: string;
  let stationReadyMs = 0;

  before(
    async () => {
      assert.ok(existsSync(BUILT), 'dist/backupd-linux-arm64 is missing: `npm run build` writes it');
      assert.ok(
        existsSync(ARM64_LOADER),
        `${ARM64_LOADER} is missing: dpkg --add-architecture arm64 && apt-get install libc6:arm64 libstdc++6:arm64`,
      );
      const qemu = spawnSync('sh', ['-c', `command -v ${QEMU}`], { encoding: 'utf8' }).stdout.trim();
      writeFileSync(executable, `#!/bin/sh\nexec ${qemu} ${BUILT} "$@"\n`);
      chmodSync(executable, 0o755);
      const scoutData = join(work, 'scout');
      source = buildTree(join(scoutData, 'scan', JOB), {
        '.upload_dir': '',
        'a.txt': 'backed up on arm64\n',
        'sub/b.bin': Buffer.from(Array.from({ length: 5_000 }, (_, i) => (i * 13) % 256)),
        'sub/empty/': null,
      });
      const started = performance.now();
      // Both start together; each is kept as soon as it is up, so after() stops it even if
      // the other one fails to start.
      const [stationStart, scoutStart] = await Promise.allSettled([
        startServer('station', {
          executable,
          env,
          dataDir: join(work, 'station'),
          readyTimeoutMs: EMULATED_READY_MS,
        }).then((server) => {
          station = server;
          stationReadyMs = performance.now() - started;
        }),
        startServer('scout', { executable, env, dataDir: scoutData, readyTimeoutMs: EMULATED_READY_MS }).then(
          (server) => {
            scout = server;
          },
        ),
      ]);
      for (const start of [stationStart, scoutStart]) if (start.status === 'rejected') throw start.reason;
    },
    { timeout: EMULATED_READY_MS + 30_000 },
  );

  after(async () => {
    await Promise.all([shutDown(scout), shutDown(station)]);
    rmSync(work, { recursive: true, force: true });
  });

  test('is an AArch64 executable whose --version names linux-arm64', async () => {
    assert.equal(elfMachine(BUILT), 183, 'an AArch64 ELF file');
    const result = await runBackupd(['--version'], { executable, env, cwd: work });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^backupd \d+\.\d+\.\d+ \([0-9a-f]{7,}\) linux-arm64$/m);
  });

  test('a Station on the embedded database answers /health; a Scout backs up to it and scout restore brings the job back', async (t) => {
    t.diagnostic(`emulated Station healthy after ${(stationReadyMs / 1000).toFixed(1)} s`);
    const health = await fetch(`${station.url}/health`);
    assert.equal(health.status, 200);
    const [stationAdmin, scoutAdmin] = await Promise.all([adminClient(station.url), adminClient(scout.url)]);
    await connectScout(scoutAdmin, stationAdmin, 'arm64-host');
    const stored = await backupJob(scoutAdmin, JOB, { timeoutMs: 120_000, intervalMs: 500 });

    const dest = join(work, 'restored');
    mkdirSync(dest);
    const result = await runBackupd(
      ['scout', 'restore', '--job', JOB, '--dest', dest, '--data-dir', scout.dataDir],
      { executable, env, cwd: work },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.stdout.includes(stored), result.stdout);
    assert.deepEqual(jobTree(dest), jobTree(source));
  });
});
