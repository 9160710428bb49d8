/**
 * Scout benchmark (issues #14 and #27): one run, every dataset, one table of targets. Per dataset
 * it measures side by side
 *   - the pipeline: `tar -cf - | zstd -3 -T0 | age -r` into a file, and `age -d | zstd -d | tar -x`;
 *     for context (no target), the same backup keeping what backupd's archive keeps (`tar
 *     --format=posix --xattrs --acls`: every file's extended attributes and ACLs are listed);
 *   - restic (`restic init` + first `restic backup`, and `restic restore`), when installed;
 *   - backupd, from dist/ on the shipped defaults: run-now through a Station on loopback until
 *     stored (and the phase `archiving` of `/api/status`, the upload streaming alongside), its
 *     archive stage alone (bench/archive-alone.ts: the same code into a file, nothing else), then
 *     `backupd scout restore` from that Station into an empty folder, and the Scout's own restore
 *     into the job folder (every file there already: left unchanged), four more backups and the
 *     Scout's idle RSS; the Station's CPU per received GiB and its peak RSS.
 * Each timed step starts after a `sync` (`settle`), so none pays for the last one's writeback,
 * each backup with the dataset read just before (`warm`), so all find it in the page cache, and
 * each tool's restore writes into a file system made for it (`place`).
 * Datasets (bench/scout-dataset.ts): `1g` and `4g` (mixed, issue #14's shape) and `files` (a
 * million files of 0–4 KiB). BENCH_DATASETS=1g,files picks some (any `<n>g` size works),
 * BENCH_GIB=n is short for BENCH_DATASETS=<n>g, BENCH_FILES=n sizes the `files` dataset. Each is
 * made once under the temp folder and reused.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
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
import { type Check, checksTable, fetchWithoutTimeouts, ratio } from './bench-kit.ts';
import { cpuSeconds, peakRssMib, rssMib } from './proc-stats.ts';
import { generateDataset, generateSmallFiles } from './scout-dataset.ts';

interface Dataset {
  /** Its folder's name part and its column in the table of targets. */
  id: string;
  make: (dir: string) => void;
}

function datasets(): Dataset[] {
  const spec =
    process.env.BENCH_DATASETS ?? (process.env.BENCH_GIB ? `${process.env.BENCH_GIB}g` : '1g,4g,files');
  return spec
    .split(',')
    .map((token) => token.trim())
    .filter(Boolean)
    .map((token) => {
      const size = /^(\d+(?:\.\d+)?)g$/.exec(token);
      if (size) return { id: `${Number(size[1])}g`, make: (dir) => generateDataset(dir, Number(size[1])) };
      if (token === 'files') {
        const files = Number(process.env.BENCH_FILES ?? 1_000_000);
        return { id: `files-${files}`, make: (dir) => generateSmallFiles(dir, files) };
      }
      throw new Error(`BENCH_DATASETS: "${token}" is neither <n>g (a mixed dataset of n GiB) nor files`);
    });
}

interface Measure {
  seconds: number;
  cpu: number;
  rssMib: number;
}

/**
 * Writes out what the steps before left dirty in the page cache (`sync`), so that no step is
 * timed while the kernel writes back the last one's files: a restore of a million files leaves
 * ~2 GB and a million inodes to write, and the next step otherwise shares the two cores and the
 * file system with that writeback (the reference pipeline, timed first, never did).
 */
const settle = () => execFileSync('sync');

/**
 * Reads every file of the dataset, so each backup (the pipeline's, the archive stage's, restic's,
 * backupd's) starts with it in the page cache. Without this, which tool found it cached depended
 * on the order and the minutes between them: a virtual machine may reclaim page cache that was
 * not read for a while (DAMON's pageout scheme on the machines these ratios were taken on moves
 * out pages idle for ~60 s), and a tool that read from the disk looked slower than one that did not.
 */
const warm = (data: string) => execFileSync('sh', ['-c', 'tar -cf - -C "$0" . | cat > /dev/null', data]);

/** Runs a shell command under /usr/bin/time: wall, CPU of all its processes, largest peak RSS. */
function timed(root: string, script: string, env: Record<string, string> = {}): Measure {
  const report = join(root, 'time.txt');
  settle();
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Whether each restore can go into an ext4 file system made for it: as root, with mkfs.ext4
 * and loop devices (this machine; CI does not run the bench).
 */
const freshFileSystems =
  process.getuid?.() === 0 && !spawnSync('mkfs.ext4', ['-V']).error && !spawnSync('losetup', ['-f']).error;

/**
 * One dataset's folders: the source under `scan/dataset`, restores under `restores/`.
 *
 * Each restore (the pipeline's, restic's, backupd's) goes into an ext4 file system made for it
 * (like `/`: no journal), mounted from an image file, and removed once its tree was compared.
 * So every tool writes into the same fresh ground: on a long-used disk, ext4 creates files
 * several times slower next to inodes freed in the last minutes and on a fuller disk, and a
 * restore's time then said more about the disk's history (and which tool ran first after a
 * delete) than about the tool — the same million-file restore took 52.5 CPU-s on a fresh file
 * system and 91.9 in a bench run. Removing an image deletes one file, not the restored files one
 * by one, so no run slows the next. Without root, restores go to folders beside the dataset,
 * removed at the very end.
 */
function place(dataset: Dataset) {
  const root = join(tmpdir(), `backupd-bench-scout-${dataset.id}`);
  const scan = join(root, 'scan');
  const data = join(scan, 'dataset');
  let restores = 0;
  let room: { bytes: number; files: number } | null = null;
  return {
    root,
    scan,
    data,
    /** A folder for a restore: a fresh file system mounted there when possible. */
    restoreDir(name: string): string {
      restores += 1;
      const dir = join(root, 'restores', `${name}-${restores}`);
      mkdirSync(dir, { recursive: true });
      if (!freshFileSystems) return dir;
      room ??= sizeOf(data);
      const image = `${dir}.img`;
      // Room for the data, a 4 KiB block per file, folders and slack; an inode per file and more.
      const bytes = Math.ceil((room.bytes * 1.25 + room.files * 8192 + 2 ** 30) / 2 ** 20);
      execFileSync('truncate', ['-s', `${bytes}M`, image]);
      execFileSync('mkfs.ext4', [
        '-q',
        '-F',
        '-O',
        '^has_journal',
        '-E',
        'lazy_itable_init=0',
        '-N',
        String(Math.ceil(room.files * 1.2) + 100_000),
        image,
      ]);
      execFileSync('mount', ['-o', 'loop', image, dir]);
      rmSync(join(dir, 'lost+found'), { recursive: true });
      return dir;
    },
    /** Done with a restore: its file system goes (a folder stays until `removeRestores`). */
    removeRestore(dir: string): void {
      if (!freshFileSystems) return;
      execFileSync('umount', [dir]);
      rmSync(`${dir}.img`);
    },
    removeRestores(): void {
      rmSync(join(root, 'restores'), { recursive: true, force: true });
    },
  };
}

/** The dataset's bytes (without its marker) and files. */
function sizeOf(data: string): { bytes: number; files: number } {
  const [bytes = 0, files = 0] = execFileSync(
    'sh',
    ['-c', 'du -sb --exclude=.complete "$1" | cut -f1; find "$1" -type f | wc -l', 'sh', data],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .map(Number);
  return { bytes, files };
}
type Place = ReturnType<typeof place>;

/**
 * Files equal in content (`diff -r`) and, unless `contentOnly`, in type, mode and mtime
 * (`find -printf`) — mtimes within `mtimeTolerance` seconds (backupd keeps microseconds).
 */
function assertSameTree(data: string, copy: string, mtimeTolerance: number | 'content only' = 2e-6): void {
  // The job's marker (.upload_dir) is never part of its snapshot.
  execFileSync('diff', ['-r', '--no-dereference', '-x', '.upload_dir', data, copy]);
  if (mtimeTolerance === 'content only') return;
  const listing = (dir: string) =>
    new Map(
      execFileSync(
        'sh',
        ['-c', 'cd "$1" && find . -mindepth 1 -not -name .upload_dir -printf "%p %y %m %T@\\n"', 'sh', dir],
        { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 },
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

function pipeline(at: Place) {
  const key = generateScoutKey();
  const keyFile = join(at.root, 'key.txt');
  writeFileSync(keyFile, `${key.ageIdentity}\n`, { mode: 0o600 });
  const archive = join(at.root, 'pipeline.tar.zst.age');
  // Context, not a target: GNU tar keeping what backupd's archive keeps (pax headers, extended
  // attributes and ACLs, so an llistxattr of every file), on the same data.
  warm(at.data);
  const keeping = timed(
    at.root,
    `tar --format=posix --xattrs --acls -cf - -C "${at.data}" . | zstd -3 -T0 -q | age -r ${key.ageRecipient} > "${archive}"`,
  );
  rmSync(archive);
  warm(at.data);
  const backup = timed(
    at.root,
    `tar -cf - -C "${at.data}" . | zstd -3 -T0 -q | age -r ${key.ageRecipient} > "${archive}"`,
  );
  const dest = at.restoreDir('pipeline');
  const restore = timed(at.root, `age -d -i "${keyFile}" "${archive}" | zstd -d -q | tar -x -C "${dest}"`);
  // GNU tar's default format keeps whole seconds.
  assertSameTree(at.data, dest, 1);
  at.removeRestore(dest);
  rmSync(archive);
  console.error(`pipeline: ${JSON.stringify({ backup, keeping, restore })}`);
  return { backup, keeping, restore };
}

/** The Scout's archive stage alone (bench/archive-alone.ts), timed like the pipeline. */
function archiveAlone(at: Place): Measure {
  const archive = join(at.root, 'archive-alone.tar.zst.age');
  warm(at.data);
  const measure = timed(
    at.root,
    `"${process.execPath}" "${join(import.meta.dirname, 'archive-alone.ts')}" "${at.data}" "${archive}" > /dev/null`,
  );
  rmSync(archive);
  console.error(`backupd archive stage alone: ${JSON.stringify(measure)}`);
  return measure;
}

function restic(at: Place) {
  if (spawnSync('restic', ['version']).error) return null;
  const repo = join(at.root, 'restic-repo');
  rmSync(repo, { recursive: true, force: true });
  const env = { RESTIC_PASSWORD: 'bench', RESTIC_REPOSITORY: repo };
  warm(at.data);
  const backup = timed(at.root, `restic init -q && restic backup -q "${at.data}"`, env);
  const dest = at.restoreDir('restic');
  const restore = timed(at.root, `restic restore -q latest --target "${dest}"`, env);
  assertSameTree(at.data, join(dest, at.data), 'content only');
  at.removeRestore(dest);
  rmSync(repo, { recursive: true, force: true });
  console.error(`restic: ${JSON.stringify({ backup, restore })}`);
  return { backup, restore };
}

/** Waits (at most a minute) until `folder` holds no file or does not exist. */
async function deleted(folder: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if (!existsSync(folder) || readdirSync(folder).length === 0) return;
    await sleep(100);
  }
  throw new Error(`${folder} still holds ${readdirSync(folder).join(', ')} a minute after the backup`);
}

/**
 * One run-now until stored: wall, the Scout's CPU seconds and its peak RSS meanwhile, and how
 * long `/api/status` showed the phase `archiving` (polled every 100 ms; null if never seen).
 */
async function backupOnce(admin: Client, scout: TestServer) {
  settle();
  resetPeak(scout.pid);
  const cpu = cpuSeconds(scout.pid);
  const t = performance.now();
  await admin.post('/api/run-now');
  let archivingFrom: number | null = null;
  let archivingTo: number | null = null;
  await sleep(50);
  for (;;) {
    const operation = (await admin.get('/api/status')).body.operation;
    const now = performance.now();
    if (operation?.phase === 'archiving') archivingFrom ??= now;
    else if (archivingFrom !== null) archivingTo ??= now;
    if (operation === null) break;
    await sleep(100);
  }
  const seconds = (performance.now() - t) / 1000;
  const job = (await admin.get('/api/directories')).body.directories[0];
  if (job.state.last_status !== 'uploaded')
    throw new Error(`backup failed: ${job.state.last_status} ${job.state.last_error}`);
  const archiveSeconds =
    archivingFrom === null ? null : ((archivingTo ?? performance.now()) - archivingFrom) / 1000;
  // The uploaded archive is deleted after the backup ends (src/scout/backup/archive-removal.ts):
  // its CPU counts too, so the CPU is read once it is gone.
  await deleted(join(scout.dataDir, 'removing'));
  return { seconds, cpu: cpuSeconds(scout.pid) - cpu, rssMib: peakRssMib(scout.pid), archiveSeconds };
}

async function backupd(at: Place) {
  // Before the servers start: warming blocks this process for seconds, and a client connection
  // idle that long meets the servers' keep-alive timeout.
  warm(at.data);
  const station = await startServer('station', { entry: 'dist', env: { LOG_LEVEL: 'warn' } });
  const scoutData = join(at.root, 'scout-data');
  rmSync(scoutData, { recursive: true, force: true });
  const scout = await startServer('scout', {
    entry: 'dist',
    dataDir: scoutData,
    env: { LOG_LEVEL: 'warn', SCAN_ROOT: at.scan },
  });
  try {
    const stationAdmin = await adminClient(station.url);
    const credential = (await stationAdmin.post('/api/credentials/mint', {})).body.credential;
    const admin = await adminClient(scout.url);
    await admin.post('/api/settings', { station_url: station.url, scout_credential: credential });
    await admin.post('/api/directories/save-job', { relative_path: 'dataset', config: {} });
    const stationCpu = cpuSeconds(station.pid);
    const backup = await backupOnce(admin, scout);
    const stationBackupCpu = cpuSeconds(station.pid) - stationCpu;
    const listed = await admin.get('/api/recovery/snapshots?relative_path=dataset');
    const archiveGib = Number(listed.body.snapshots?.[0]?.size_bytes ?? 0) / 2 ** 30;
    console.error(`backupd backup: ${JSON.stringify({ ...backup, archiveGib, stationBackupCpu })}`);

    // `backupd scout restore` from the Station, as a new process, into an empty folder.
    const dest = at.restoreDir('backupd');
    const cli = timed(
      at.root,
      `"${process.execPath}" "${join(import.meta.dirname, '..', 'dist', 'backupd.mjs')}" scout restore --data-dir "${scoutData}" --job dataset --dest "${dest}" > /dev/null`,
      { LOG_LEVEL: 'warn' },
    );
    assertSameTree(at.data, dest);
    at.removeRestore(dest);
    console.error(`backupd scout restore: ${JSON.stringify(cli)}`);

    // The Scout's own restore, into the job folder: every file is there already, so it is
    // compared and left unchanged (issue #27: a match is not rewritten).
    resetPeak(scout.pid);
    const ownCpu = cpuSeconds(scout.pid);
    // spawnSync blocked this process while the Scout closed the idle keep-alive connection: the
    // first request may meet that closed socket; the retry goes over a fresh one.
    await admin.get('/api/status').catch(() => admin.get('/api/status'));
    settle();
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
      unchanged: Number(own.body.unchanged),
      rewritten: Number(own.body.added) + Number(own.body.replaced),
    };
    console.error(`backupd own restore: ${JSON.stringify(scoutRestore)}`);

    // Four more backups (one file changed each time, put back after), then the Scout's RSS at rest.
    const changed = join(at.data, '.complete');
    const before = statSync(changed);
    let peak = backup.rssMib;
    for (let i = 0; i < 4; i += 1) {
      appendFileSync(changed, `run ${i}\n`);
      peak = Math.max(peak, (await backupOnce(admin, scout)).rssMib);
    }
    truncateSync(changed, before.size);
    utimesSync(changed, before.atime, before.mtime);
    await sleep(3000);
    return {
      backup,
      archiveGib,
      station: { cpu: stationBackupCpu, peakMib: peakRssMib(station.pid) },
      cli,
      scoutRestore,
      peakOfFive: peak,
      idle: rssMib(scout.pid),
    };
  } finally {
    await scout.dispose();
    await station.dispose();
  }
}

/** Everything measured on one dataset, and its rows of the table of targets. */
async function runDataset(dataset: Dataset) {
  const at = place(dataset);
  const t = performance.now();
  dataset.make(at.data);
  console.error(`dataset ${dataset.id}: ready in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  const { bytes, files } = sizeOf(at.data);
  // Left from an earlier run (long enough ago not to slow file creation down).
  at.removeRestores();
  // The programs first, then backupd right after, so all three see the machine in the same state.
  const tools = pipeline(at);
  const archive = archiveAlone(at);
  const theirs = restic(at);
  const ours = await backupd(at);
  if (!existsSync(join(at.data, '.complete'))) throw new Error('dataset missing after the run');

  const gib = bytes / 2 ** 30;
  const s = (m: { seconds: number }) => `${m.seconds.toFixed(1)} s`;
  const perGib = (cpu: number) => `${(cpu / gib).toFixed(1)} s/GiB`;
  const mib = (n: number) => `${Math.round(n)} MiB`;
  console.log(
    `\n### ${dataset.id}: ${gib.toFixed(2)} GiB in ${files.toLocaleString('en')} files at ${at.data}\n`,
  );
  console.log('| | time | CPU | peak RSS |');
  console.log('| --- | --- | --- | --- |');
  const row = (what: string, m: Measure, extra = '') =>
    console.log(
      `| ${what} | ${s(m)} | ${m.cpu.toFixed(1)} s (${perGib(m.cpu)}) | ${mib(m.rssMib)}${extra} |`,
    );
  row('backup: `tar \\| zstd -3 -T0 \\| age`', tools.backup);
  row(
    'backup, for context: the same pipeline keeping what backupd keeps (`tar --format=posix --xattrs --acls`)',
    tools.keeping,
  );
  if (theirs) row('backup: restic init + first backup', theirs.backup);
  row(
    'backup: backupd run-now until stored (Scout)',
    ours.backup,
    `; ${mib(ours.peakOfFive)} over 5 backups`,
  );
  row('backupd archive stage alone (walk → tar → zstd → age into a file)', archive);
  console.log(
    `| backupd phase \`archiving\` in the backup (the streamed upload runs alongside) | ${ours.backup.archiveSeconds === null ? '—' : `${ours.backup.archiveSeconds.toFixed(1)} s`} | | |`,
  );
  console.log(
    `| Station during the first backup (${ours.archiveGib.toFixed(2)} GiB received) | | ${ours.station.cpu.toFixed(1)} s (${(ours.station.cpu / ours.archiveGib).toFixed(2)} s per received GiB) | ${mib(ours.station.peakMib)} (whole run) |`,
  );
  console.log(`| Scout idle after 5 backups | | | ${mib(ours.idle)} (now) |`);
  row('restore: `age -d \\| zstd -d \\| tar -x`', tools.restore);
  if (theirs) row('restore: restic restore', theirs.restore);
  row('restore: `backupd scout restore` from the Station', ours.cli);
  row(
    `restore: the Scout's own, into the job folder (${ours.scoutRestore.unchanged} unchanged, ${ours.scoutRestore.rewritten} written)`,
    ours.scoutRestore,
  );
  if (!theirs)
    console.log('\nrestic is not installed (apt-get install restic): its rows and targets are left out');
  console.log(
    `\nFor context (not a target): against the pipeline that keeps the same attributes, backupd's backup is ${ratio(tools.keeping.seconds, ours.backup.seconds).toFixed(2)}×, its archive stage alone ${ratio(tools.keeping.seconds, archive.seconds).toFixed(2)}×, its Scout CPU ${(ours.backup.cpu / tools.keeping.cpu).toFixed(2)}× that pipeline's.`,
  );

  const checks: Check[] = [
    {
      what: 'backup vs the pipeline',
      value: ratio(tools.backup.seconds, ours.backup.seconds),
      at: 'least',
      target: 0.7,
      unit: '×',
    },
    ...(theirs
      ? [
          {
            what: "backup vs restic's first backup",
            value: ratio(theirs.backup.seconds, ours.backup.seconds),
            at: 'least',
            target: 1.5,
            unit: '×',
          } as const,
        ]
      : []),
    {
      what: 'archive stage alone vs the pipeline',
      value: ratio(tools.backup.seconds, archive.seconds),
      at: 'least',
      target: 0.9,
      unit: '×',
    },
    {
      what: '`scout restore` vs `age -d \\| zstd -d \\| tar -x`',
      value: ratio(tools.restore.seconds, ours.cli.seconds),
      at: 'least',
      target: 0.9,
      unit: '×',
    },
    ...(theirs
      ? [
          {
            what: '`scout restore` vs restic restore',
            value: ratio(theirs.restore.seconds, ours.cli.seconds),
            at: 'least',
            target: 1.2,
            unit: '×',
          } as const,
        ]
      : []),
    {
      what: "the Scout's own restore vs the pipeline's",
      value: ratio(tools.restore.seconds, ours.scoutRestore.seconds),
      at: 'least',
      target: 0.7,
      unit: '×',
    },
    {
      what: "Scout CPU for a backup ÷ the pipeline's",
      value: ours.backup.cpu / tools.backup.cpu,
      at: 'most',
      target: 1.3,
      unit: '×',
    },
    { what: 'Scout peak RSS over 5 backups', value: ours.peakOfFive, at: 'most', target: 250, unit: ' MiB' },
    { what: 'Scout idle RSS after 5 backups', value: ours.idle, at: 'most', target: 150, unit: ' MiB' },
    { what: 'restore CLI peak RSS', value: ours.cli.rssMib, at: 'most', target: 200, unit: ' MiB' },
    { what: 'Station peak RSS', value: ours.station.peakMib, at: 'most', target: 300, unit: ' MiB' },
    {
      what: 'Station CPU per received GiB',
      value: ours.station.cpu / ours.archiveGib,
      at: 'most',
      target: 1.5,
      unit: ' s',
    },
  ];
  return {
    id: dataset.id,
    checks,
    peakOfFive: ours.peakOfFive,
    idle: ours.idle,
    removeRestores: () => at.removeRestores(),
  };
}

await fetchWithoutTimeouts();
const results = [];
for (const dataset of datasets()) results.push(await runDataset(dataset));
// Restored copies in folders (no fresh file systems) go only now: ext4 creates files slowly next
// to inodes freed in the last minutes, which would slow the next restore down.
for (const { removeRestores } of results) removeRestores();
console.log(
  "\n### Targets (issue #27), side by side; speed ratios are the other time ÷ backupd's (higher is faster)\n",
);
const peaks = results.map((r) => r.peakOfFive);
const idles = results.map((r) => r.idle);
const spread = (values: number[]) => Math.max(...values) / Math.min(...values);
console.log(
  checksTable(
    results.map((r) => ({ column: r.id, checks: r.checks })),
    results.length > 1
      ? [
          {
            what: 'Scout peak RSS, largest ÷ smallest of the datasets',
            value: spread(peaks),
            at: 'most',
            target: 1.1,
            unit: '×',
          },
          {
            what: 'Scout idle RSS, largest ÷ smallest of the datasets',
            value: spread(idles),
            at: 'most',
            target: 1.1,
            unit: '×',
          },
        ]
      : [],
  ),
);
