/**
 * Scout benchmark (issue #14): one run, one table. On a generated dataset of the issue's shape
 * (bench/scout-dataset.ts; BENCH_GIB, default 1) it measures side by side
 *   - the pipeline: `tar -cf - | zstd -3 -T0 | age -r` into a file, and
 *     `age -d | zstd -d | tar -x` back;
 *   - restic (`restic init` + first `restic backup`, and `restic restore`), when installed;
 *   - backupd: run-now through a Station on loopback until stored, then `backupd scout restore`
 *     from that Station, and the Scout's own restore (POST /api/recovery/restore);
 * with wall time, CPU seconds, peak RSS, and the Scout's idle RSS after five consecutive
 * backups. Ratios are against the pipeline (higher is better for speed).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateScoutKey } from '../src/scout/archive/x25519.ts';
import { adminClient, type Client } from '../test/helpers/http.ts';
import { startServer, type TestServer } from '../test/helpers/server.ts';
import { cpuSeconds, peakRssMib, rssMib } from './proc-stats.ts';
import { generateDataset } from './scout-dataset.ts';

const gib = Number(process.env.BENCH_GIB ?? 1);
const root = join(tmpdir(), `backupd-bench-scout-${gib}g`);
const scan = join(root, 'scan');
const data = join(scan, 'dataset');

interface Measure {
  seconds: number;
  cpu: number;
  rssMib: number;
}

/** Runs a shell command under /usr/bin/time: wall, CPU of all its processes, largest peak RSS. */
function timed(script: string, env: Record<string, string> = {}): Measure {
  const report = join(root, 'time.txt');
  const t = performance.now();
  const run = spawnSync('/usr/bin/time', ['-o', report, '-f', '%U %S %M', 'sh', '-c', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const seconds = (performance.now() - t) / 1000;
  if (run.status !== 0) throw new Error(`${script} failed: ${run.stderr.toString().slice(-500)}`);
  const [user, sys, kib] = execFileSync('tail', ['-1', report], { encoding: 'utf8' })
    .trim()
    .split(' ')
    .map(Number);
  return { seconds, cpu: (user ?? 0) + (sys ?? 0), rssMib: (kib ?? 0) / 1024 };
}

/** The peak RSS counter of a running process starts again from its current RSS. */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** A folder for a restore, made where no recent delete slows file creation (ext4 skips recently freed inodes). */
let restores = 0;
function restoreDir(name: string): string {
  restores += 1;
  const dir = join(root, 'restores', `${name}-${restores}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Files equal in content (`diff -r`) and, unless `contentOnly`, in type, mode and mtime
 * (`find -printf`) — mtimes within `mtimeTolerance` seconds (backupd keeps microseconds).
 */
function assertSameTree(copy: string, mtimeTolerance: number | 'content only' = 2e-6): void {
  // The job's marker (.upload_dir) is never part of its snapshot.
  execFileSync('diff', ['-r', '--no-dereference', '-x', '.upload_dir', data, copy]);
  if (mtimeTolerance === 'content only') return;
  const listing = (dir: string) =>
    new Map(
      execFileSync(
        'sh',
        ['-c', 'cd "$1" && find . -mindepth 1 -not -name .upload_dir -printf "%p %y %m %T@\\n"', 'sh', dir],
        {
          encoding: 'utf8',
          maxBuffer: 256 * 1024 * 1024,
        },
      )
        .trim()
        .split('\n')
        .map((line) => {
          const [mtime = '', mode, type, ...path] = line.split(' ').reverse();
          return [path.reverse().join(' '), { type, mode, mtime: Number(mtime) }] as const;
        }),
    );
  const want = listing(data);
  const got = listing(copy);
  for (const [path, meta] of want) {
    const other = got.get(path);
    if (
      !other ||
      other.type !== meta.type ||
      other.mode !== meta.mode ||
      Math.abs(other.mtime - meta.mtime) > mtimeTolerance
    ) {
      throw new Error(`restored ${path} differs: ${JSON.stringify(meta)} → ${JSON.stringify(other)}`);
    }
  }
}

function pipeline(recipient: string, keyFile: string) {
  const archive = join(root, 'pipeline.tar.zst.age');
  const backup = timed(`tar -cf - -C "${data}" . | zstd -3 -T0 -q | age -r ${recipient} > "${archive}"`);
  const dest = restoreDir('pipeline');
  const restore = timed(`age -d -i "${keyFile}" "${archive}" | zstd -d -q | tar -x -C "${dest}"`);
  // GNU tar's default format keeps whole seconds.
  assertSameTree(dest, 1);
  rmSync(archive);
  console.error(`pipeline: ${JSON.stringify({ backup, restore })}`);
  return { backup, restore };
}

function restic() {
  if (spawnSync('restic', ['version']).error) return null;
  const repo = join(root, 'restic-repo');
  rmSync(repo, { recursive: true, force: true });
  const env = { RESTIC_PASSWORD: 'bench', RESTIC_REPOSITORY: repo };
  const backup = timed(`restic init -q && restic backup -q "${data}"`, env);
  const dest = restoreDir('restic');
  const restore = timed(`restic restore -q latest --target "${dest}"`, env);
  assertSameTree(join(dest, data), 'content only');
  rmSync(repo, { recursive: true, force: true });
  return { backup, restore };
}

async function waitIdle(admin: Client): Promise<void> {
  for (;;) {
    if ((await admin.get('/api/status')).body.operation === null) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One run-now until stored: wall, the Scout's CPU seconds and its peak RSS meanwhile. */
async function backupOnce(admin: Client, scout: TestServer): Promise<Measure> {
  resetPeak(scout.pid);
  const cpu = cpuSeconds(scout.pid);
  const t = performance.now();
  await admin.post('/api/run-now');
  await new Promise((r) => setTimeout(r, 50));
  await waitIdle(admin);
  const seconds = (performance.now() - t) / 1000;
  const job = (await admin.get('/api/directories')).body.directories[0];
  if (job.state.last_status !== 'uploaded')
    throw new Error(`backup failed: ${job.state.last_status} ${job.state.last_error}`);
  return { seconds, cpu: cpuSeconds(scout.pid) - cpu, rssMib: peakRssMib(scout.pid) };
}

async function backupd() {
  const station = await startServer('station', { entry: 'dist', env: { LOG_LEVEL: 'warn' } });
  const scoutData = join(root, 'scout-data');
  rmSync(scoutData, { recursive: true, force: true });
  const scout = await startServer('scout', {
    entry: 'dist',
    dataDir: scoutData,
    env: { LOG_LEVEL: 'warn', SCAN_ROOT: scan },
  });
  try {
    const stationAdmin = await adminClient(station.url);
    const credential = (await stationAdmin.post('/api/credentials/mint', {})).body.credential;
    const admin = await adminClient(scout.url);
    await admin.post('/api/settings', { station_url: station.url, scout_credential: credential });
    await admin.post('/api/directories/save-job', { relative_path: 'dataset', config: {} });
    const stationCpu = cpuSeconds(station.pid);
    const backup = await backupOnce(admin, scout);
    console.error(`backupd backup: ${JSON.stringify(backup)}`);
    const stationBackup = { cpu: cpuSeconds(station.pid) - stationCpu, rssMib: peakRssMib(station.pid) };

    // `backupd scout restore` from the Station, as a new process.
    const dest = restoreDir('backupd');
    const cli = timed(
      `"${process.execPath}" "${join(import.meta.dirname, '..', 'dist', 'backupd.mjs')}" scout restore --data-dir "${scoutData}" --job dataset --dest "${dest}" > /dev/null`,
      { LOG_LEVEL: 'warn' },
    );
    assertSameTree(dest);
    console.error(`backupd scout restore: ${JSON.stringify(cli)}`);

    // The Scout's own restore, into the job folder (everything there already: all replaced).
    resetPeak(scout.pid);
    const ownCpu = cpuSeconds(scout.pid);
    // spawnSync blocked this process while the Scout closed the idle keep-alive connection: the
    // first request may meet that closed socket; the retry goes over a fresh one.
    await admin.get('/api/status').catch(() => admin.get('/api/status'));
    const t = performance.now();
    const own = await admin.post('/api/recovery/restore', { relative_path: 'dataset' }).catch((error) => {
      console.error(scout.output().slice(-4000));
      throw error;
    });
    if (own.body.status !== 'restored') throw new Error(`Scout restore failed: ${JSON.stringify(own.body)}`);
    const scoutRestore = {
      seconds: (performance.now() - t) / 1000,
      cpu: cpuSeconds(scout.pid) - ownCpu,
      rssMib: peakRssMib(scout.pid),
    };

    // Four more backups (one file changed each time, put back after), then the Scout's RSS at rest.
    const changed = join(data, 'text', 'doc-0.txt');
    const before = statSync(changed);
    let peak = backup.rssMib;
    for (let i = 0; i < 4; i += 1) {
      appendFileSync(changed, `run ${i}\n`);
      peak = Math.max(peak, (await backupOnce(admin, scout)).rssMib);
    }
    truncateSync(changed, before.size);
    utimesSync(changed, before.atime, before.mtime);
    await new Promise((r) => setTimeout(r, 3000));
    const idle = rssMib(scout.pid);
    return {
      backup,
      stationBackup,
      cli,
      scoutRestore,
      peakOfFive: peak,
      idle,
    };
  } finally {
    await scout.dispose();
    await station.dispose();
  }
}

generateDataset(data, gib);
const sourceGib =
  Number(execFileSync('du', ['-sb', '--exclude=.complete', data]).toString().split('\t')[0]) / 2 ** 30;
rmSync(join(root, 'restores'), { recursive: true, force: true });
// The programs first, then backupd right after, so all three see the machine in the same state.
const pipelineKey = generateScoutKey();
const keyFile = join(root, 'key.txt');
writeFileSync(keyFile, `${pipelineKey.ageIdentity}\n`, { mode: 0o600 });
const tools = pipeline(pipelineKey.ageRecipient, keyFile);
const theirs = restic();
const ours = await backupd();
rmSync(join(root, 'restores'), { recursive: true, force: true });

const s = (m: { seconds: number }) => `${m.seconds.toFixed(1)} s`;
const ratio = (reference: number, value: number) => `${(reference / value).toFixed(2)}×`;
const cpuPerGib = (m: Measure) => `${(m.cpu / sourceGib).toFixed(1)} s/GiB`;
const mibOf = (n: number) => `${Math.round(n)} MiB`;
console.log(
  `dataset: ${sourceGib.toFixed(2)} GiB at ${data} (BENCH_GIB=${gib}); speed ratios are the pipeline's time ÷ this one's`,
);
console.log('| | backup | restore | CPU backup | peak RSS backup / restore | idle RSS after 5 backups |');
console.log('| --- | --- | --- | --- | --- | --- |');
console.log(
  `| tar \\| zstd -3 -T0 \\| age / age -d \\| zstd -d \\| tar -x | ${s(tools.backup)} | ${s(tools.restore)} | ${cpuPerGib(tools.backup)} | ${mibOf(tools.backup.rssMib)} / ${mibOf(tools.restore.rssMib)} | — |`,
);
if (theirs) {
  console.log(
    `| restic: init + first backup / restore | ${s(theirs.backup)} (${ratio(tools.backup.seconds, theirs.backup.seconds)}) | ${s(theirs.restore)} (${ratio(tools.restore.seconds, theirs.restore.seconds)}) | ${cpuPerGib(theirs.backup)} | ${mibOf(theirs.backup.rssMib)} / ${mibOf(theirs.restore.rssMib)} | — |`,
  );
} else {
  console.log('| restic | not installed (apt-get install restic): column skipped | | | | |');
}
console.log(
  `| backupd: run-now until stored / \`scout restore\` from the Station | ${s(ours.backup)} (${ratio(tools.backup.seconds, ours.backup.seconds)}${theirs ? `; ${ratio(theirs.backup.seconds, ours.backup.seconds)} restic` : ''}) | ${s(ours.cli)} (${ratio(tools.restore.seconds, ours.cli.seconds)}${theirs ? `; ${ratio(theirs.restore.seconds, ours.cli.seconds)} restic` : ''}) | Scout ${cpuPerGib(ours.backup)} (${(ours.backup.cpu / tools.backup.cpu).toFixed(2)}× the pipeline's), Station ${cpuPerGib(ours.stationBackup)} | Scout ${mibOf(ours.backup.rssMib)} (${mibOf(ours.peakOfFive)} over 5 backups) / CLI ${mibOf(ours.cli.rssMib)}; Station ${mibOf(ours.stationBackup.rssMib)} | Scout ${mibOf(ours.idle)} |`,
);
console.log(
  `| backupd: the Scout's own restore (download, decrypt, replace every file) | — | ${s(ours.scoutRestore)} (${ratio(tools.restore.seconds, ours.scoutRestore.seconds)}) | restore ${cpuPerGib(ours.scoutRestore)} | — / Scout ${mibOf(ours.scoutRestore.rssMib)} | — |`,
);
if (!existsSync(join(data, '.complete'))) throw new Error('dataset missing after the run');
