import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Readable } from 'node:stream';
import { ConfigError } from '../core/config.ts';
import { parseScoutKey, type ScoutKey } from '../scout/archive/x25519.ts';
import { readKeyFile } from '../scout/keys/identity-file.ts';
import { createKeyStore } from '../scout/keys/key-store.ts';
import { pooledFileStream } from '../scout/restore/pooled-file.ts';
import { chosenPaths, SelectionError } from '../scout/restore/restore-selection.ts';
import { restoreFailure } from '../scout/restore/restore-service.ts';
import { applyRestoreV8Settings } from '../scout/restore/restore-v8-settings.ts';
import { restoreArchive } from '../scout/restore/restorer.ts';
import { listSnapshotEntries } from '../scout/restore/snapshot-entries.ts';
import { defaultScoutId } from '../scout/services/scout-settings.ts';
import { createStationClient, StationError } from '../scout/upload/station-client.ts';
import { formatBytes } from '../shared/byte-sizes.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../shared/namespace.ts';
import { FINGERPRINT_RULE, isFingerprint } from '../shared/protocol/fields.ts';
import type { ListedJob, ListedSnapshot } from '../shared/protocol/recovery.ts';
import { CommandFailed, RestoredWithProblems } from './exit.ts';
import { createProgress } from './progress.ts';
import { recoveryFailure } from './recovery-failure.ts';

export interface RestoreFlags {
  job?: string;
  dest?: string;
  stationUrl?: string;
  token?: string;
  scoutId?: string;
  instanceId?: string;
  fingerprint?: string;
  file?: string;
  key?: string;
  keyFile?: string;
  dataDir?: string;
  archive?: string;
  dryRun?: boolean;
  list?: boolean;
  listFiles?: boolean;
  /** `--path`, repeatable: files or folders relative to the job folder. */
  path?: string[];
}

/** Settings a Scout saved in its data dir (read-only; the Scout may be running). */
function savedSettings(dataDir: string): Record<string, string> {
  const path = join(dataDir, 'scout.db');
  if (!existsSync(path)) return {};
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const row = db.prepare("SELECT value FROM settings WHERE key = 'scout'").get() as
      | { value: string }
      | undefined;
    return row ? (JSON.parse(row.value) as Record<string, string>) : {};
  } catch {
    return {};
  } finally {
    db.close();
  }
}

/** A key on the command line is visible to every user of the host (`ps`, /proc) and in shell history. */
export const KEY_FLAG_WARNING =
  'warning: --key shows the key to every user of this host (ps, /proc) and keeps it in shell history; use --key-file PATH, or --key-file - to read it from standard input';

async function keysFrom(flags: RestoreFlags, dataDir: string | undefined): Promise<ScoutKey[]> {
  if (flags.keyFile) return readKeyFile(flags.keyFile);
  if (flags.key) process.stderr.write(`${KEY_FLAG_WARNING}\n`);
  try {
    if (flags.key) return [parseScoutKey(flags.key)];
  } catch (error) {
    throw new ConfigError(`the key is not a Scout key: ${(error as Error).message}`);
  }
  if (dataDir && existsSync(join(dataDir, 'scout-key'))) return createKeyStore(dataDir).all();
  throw new ConfigError(
    'no key: pass --key KEY_BASE64, --key-file PATH, or --data-dir of the Scout that made the snapshot',
  );
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new ConfigError(`${what} is required`);
  return value;
}

/** The Station, the token and the job's recovery path, from the flags, the data dir or the environment. */
function stationTarget(flags: RestoreFlags, dataDir: string | undefined) {
  const saved = dataDir ? savedSettings(dataDir) : {};
  const stationUrl = need(flags.stationUrl ?? saved.station_url ?? process.env.STATION_URL, '--station-url');
  const token = need(
    flags.token ?? saved.scout_credential ?? process.env.SCOUT_CREDENTIAL,
    '--token (a Station token)',
  );
  // A Scout that never saved scout_id uses its host name, as the running Scout does.
  const scoutId = need(
    flags.scoutId ?? saved.scout_id ?? process.env.SCOUT_ID ?? (dataDir ? defaultScoutId() : undefined),
    '--scout-id',
  );
  const instanceFile = dataDir ? join(dataDir, 'instance-id') : '';
  const instanceId = need(
    flags.instanceId ??
      (instanceFile && existsSync(instanceFile) ? readFileSync(instanceFile, 'utf8').trim() : undefined),
    '--instance-id',
  );
  return {
    client: createStationClient(stationUrl, token).instance(scoutId, instanceId),
    scoutId,
    instanceId,
  };
}

/** `--list` without `--job`: the instance's jobs on the Station, one a line. */
async function listJobs(flags: RestoreFlags, dataDir: string | undefined): Promise<void> {
  const { client, scoutId, instanceId } = stationTarget(flags, dataDir);
  let jobs: ListedJob[];
  try {
    jobs = await client.jobs();
  } catch (error) {
    throw failed(recoveryFailure(error, scoutId, instanceId));
  }
  if (jobs.length === 0) {
    process.stdout.write(`no snapshots from ${scoutId}/${instanceId} on the Station\n`);
    return;
  }
  for (const j of jobs) {
    const count = `${j.snapshot_count} snapshot${j.snapshot_count === 1 ? '' : 's'}`;
    process.stdout.write(
      `${j.job_name}  ${count}, newest ${j.newest_timestamp} (${formatBytes(j.newest_size_bytes)})\n`,
    );
  }
  process.stderr.write("list a job's snapshots with --list --job NAME\n");
}

/** A job with no snapshot on the Station: exit 1, naming the jobs there are. */
async function unknownJob(
  client: ReturnType<typeof stationTarget>['client'],
  job: string,
  where: string,
): Promise<CommandFailed> {
  const known = await client.jobs().then(
    (jobs) => jobs.map((j) => j.job_name),
    () => null,
  );
  const hint =
    known === null
      ? ''
      : known.length === 0
        ? '; it has none from this instance'
        : `; jobs there: ${known.join(', ')}`;
  return new CommandFailed(`no job ${job} from ${where} on the Station${hint}`);
}

/** `--list`: the job's snapshots on the Station, newest first, one a line; writes nothing else. */
async function listSnapshots(flags: RestoreFlags, job: string, dataDir: string | undefined): Promise<void> {
  const { client, scoutId, instanceId } = stationTarget(flags, dataDir);
  let snapshots: ListedSnapshot[];
  try {
    snapshots = await client.snapshots(job);
  } catch (error) {
    throw failed(recoveryFailure(error, scoutId, instanceId));
  }
  if (snapshots.length === 0) throw await unknownJob(client, job, `${scoutId}/${instanceId}`);
  for (const s of snapshots) {
    const fingerprint = s.fingerprint ? s.fingerprint.slice(0, 8) : '-';
    process.stdout.write(
      `${s.timestamp}  ${formatBytes(s.size_bytes).padStart(10)}  ${fingerprint.padEnd(8)}  ${s.filename}\n`,
    );
  }
  process.stderr.write('restore one of them with --file FILENAME\n');
}

/** `backupd scout restore`: one job's snapshot into a folder, without a running Scout. */
export async function scoutRestore(flags: RestoreFlags): Promise<void> {
  // The restore's young objects die young (chunk wrappers, entries); V8 would otherwise grow the
  // young generation to 64 MiB once the objects of files queued for the writing thread
  // (src/scout/restore/file-batches.ts) had survived collections long enough. And room for the
  // old generation, so that V8 does not mark the whole heap again right after each collection.
  applyRestoreV8Settings();
  const dataDirFlag = flags.dataDir ? resolve(flags.dataDir) : undefined;
  if (flags.list && flags.job === undefined) return listJobs(flags, dataDirFlag);
  const job = need(flags.job, '--job (or --list alone to list the jobs)');
  if (!isNamespaceComponent(job)) throw new ConfigError(`--job must be ${NAMESPACE_RULE}`);
  let paths: string[] | undefined;
  try {
    paths = flags.path && flags.path.length > 0 ? chosenPaths(flags.path, '--path') : undefined;
  } catch (error) {
    if (error instanceof SelectionError) throw new ConfigError(error.message);
    throw error;
  }
  if (flags.fingerprint && flags.file) throw new ConfigError('use --fingerprint or --file, not both');
  if (flags.key && flags.keyFile) throw new ConfigError('use --key or --key-file, not both');
  if (flags.fingerprint && !isFingerprint(flags.fingerprint)) {
    throw new ConfigError(`--fingerprint must be ${FINGERPRINT_RULE}`);
  }
  const dataDir = dataDirFlag;
  if (flags.list) return listSnapshots(flags, job, dataDir);
  const dest = flags.listFiles ? '' : resolve(need(flags.dest, '--dest (the folder to restore into)'));
  const keys = await keysFrom(flags, dataDir);
  let source: Readable;
  let snapshot: string;
  let size = 0;
  if (flags.archive) {
    if (!existsSync(flags.archive)) throw new ConfigError(`--archive ${flags.archive} does not exist`);
    snapshot = flags.archive;
    source = pooledFileStream(flags.archive);
    size = statSync(flags.archive).size;
  } else {
    const { client, scoutId, instanceId } = stationTarget(flags, dataDir);
    try {
      const download = await client.download(job, {
        filename: flags.file,
        fingerprint: flags.fingerprint,
      });
      snapshot = download.filename;
      source = download.body;
      size = download.size;
    } catch (error) {
      if (error instanceof StationError && error.status === 404 && !flags.file && !flags.fingerprint) {
        const none = await client.snapshots(job).then(
          (list) => list.length === 0,
          () => false,
        );
        if (none) throw await unknownJob(client, job, `${scoutId}/${instanceId}`);
      }
      throw failed(recoveryFailure(error, scoutId, instanceId));
    }
  }
  if (flags.listFiles) return listFiles(snapshot, source, keys, size);
  const progress = createProgress(flags.dryRun ? 'reading' : 'restoring');
  let plan: Awaited<ReturnType<typeof restoreArchive>>;
  try {
    plan = await restoreArchive({
      source,
      keys,
      dest,
      paths,
      dryRun: flags.dryRun === true,
      // A dry run prints every file; a restore only counts them (a million names are ~100 MiB).
      listFiles: flags.dryRun === true,
      onSourceBytes: (read) => progress.update(read, size),
      // Each problem as it happens, on a line of its own (below a progress bar's line).
      onProblem: ({ path, message }) =>
        process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}problem: ${path}: ${message}\n`),
    });
  } catch (error) {
    throw failed(restoreFailure(error));
  } finally {
    progress.done();
  }
  const problems = plan.problemCount;
  const withProblems = `${problems} ${problems === 1 ? 'entry' : 'entries'} with problems (listed above)`;
  if (flags.dryRun) {
    for (const path of plan.add) process.stdout.write(`add ${path}\n`);
    for (const path of plan.replace) process.stdout.write(`replace ${path}\n`);
    for (const path of plan.unchanged) process.stdout.write(`unchanged ${path}\n`);
    process.stdout.write(
      `${snapshot}: would add ${plan.counts.add} and replace ${plan.counts.replace} files (${formatBytes(plan.bytes)}) in ${dest}; ${plan.counts.unchanged} unchanged\n`,
    );
    if (problems > 0) throw new RestoredWithProblems(`a restore would leave out or change ${withProblems}`);
    return;
  }
  process.stdout.write(
    `restored ${snapshot} into ${dest}: ${plan.counts.add} added, ${plan.counts.replace} replaced, ${plan.counts.unchanged} unchanged, ${formatBytes(plan.bytes)}\n`,
  );
  if (problems > 0) {
    throw new RestoredWithProblems(
      `restored ${snapshot} into ${dest} with problems: ${plan.counts.add + plan.counts.replace} files restored, ${withProblems}`,
    );
  }
}

/** `--list-files`: the snapshot's entries (escaped names, sizes in binary units); writes nothing. */
async function listFiles(snapshot: string, source: Readable, keys: ScoutKey[], size: number): Promise<void> {
  const progress = createProgress('reading');
  let files = 0;
  let bytes = 0;
  try {
    await listSnapshotEntries(
      { source, keys, onSourceBytes: (read) => progress.update(read, size) },
      (entry) => {
        if (entry.kind === 'file') {
          files += 1;
          bytes += entry.size;
        }
        const shownSize = entry.kind === 'file' ? formatBytes(entry.size) : entry.kind;
        process.stdout.write(`${shownSize.padStart(10)}  ${entry.path}\n`);
      },
    );
  } catch (error) {
    throw failed(restoreFailure(error));
  } finally {
    progress.done();
  }
  process.stderr.write(
    `${snapshot}: ${files} files, ${formatBytes(bytes)}; restore some with --path PATH (repeatable)\n`,
  );
}

/** A restore that stopped (wrong key, missing snapshot, bad token, unsafe entry): exit 1. */
function failed(error: unknown): unknown {
  if (error instanceof ConfigError) return error;
  return error instanceof Error ? new CommandFailed(error.message, { cause: error }) : error;
}
