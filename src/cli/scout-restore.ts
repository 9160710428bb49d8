import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Readable } from 'node:stream';
import { ConfigError } from '../core/config.ts';
import { parseScoutKey, type ScoutKey } from '../scout/archive/x25519.ts';
import { readKeyFile } from '../scout/keys/identity-file.ts';
import { createKeyStore } from '../scout/keys/key-store.ts';
import { restoreFailure } from '../scout/restore/restore-service.ts';
import { restoreArchive } from '../scout/restore/restorer.ts';
import { defaultScoutId } from '../scout/services/scout-settings.ts';
import { createStationClient } from '../scout/upload/station-client.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../shared/namespace.ts';
import { createProgress } from './progress.ts';
import { recoveryFailure } from './recovery-failure.ts';

export interface RestoreFlags {
  job: string;
  dest: string;
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

/** `backupd scout restore`: one job's snapshot into a folder, without a running Scout. */
export async function scoutRestore(flags: RestoreFlags): Promise<void> {
  if (!isNamespaceComponent(flags.job)) throw new ConfigError(`--job must be ${NAMESPACE_RULE}`);
  if (flags.fingerprint && flags.file) throw new ConfigError('use --fingerprint or --file, not both');
  if (flags.key && flags.keyFile) throw new ConfigError('use --key or --key-file, not both');
  if (flags.fingerprint && !/^(?:[0-9a-f]{8}|[0-9a-f]{64})$/.test(flags.fingerprint)) {
    throw new ConfigError('--fingerprint must be 8 or 64 lowercase hex characters');
  }
  const dataDir = flags.dataDir ? resolve(flags.dataDir) : undefined;
  const dest = resolve(flags.dest);
  const keys = await keysFrom(flags, dataDir);
  let source: Readable;
  let snapshot: string;
  let size = 0;
  if (flags.archive) {
    if (!existsSync(flags.archive)) throw new ConfigError(`--archive ${flags.archive} does not exist`);
    snapshot = flags.archive;
    source = createReadStream(flags.archive, { highWaterMark: 1024 * 1024 });
    size = statSync(flags.archive).size;
  } else {
    const saved = dataDir ? savedSettings(dataDir) : {};
    const stationUrl = need(
      flags.stationUrl ?? saved.station_url ?? process.env.STATION_URL,
      '--station-url',
    );
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
    const base = `/backup/recovery/${encodeURIComponent(scoutId)}/${encodeURIComponent(instanceId)}/${encodeURIComponent(flags.job)}`;
    const path = flags.file
      ? `${base}/archive/${encodeURIComponent(flags.file)}`
      : flags.fingerprint
        ? `${base}/by-fingerprint?fp=${flags.fingerprint}`
        : `${base}/latest`;
    try {
      const download = await createStationClient(stationUrl, token).download(path);
      snapshot = download.filename;
      source = download.body;
      size = download.size;
    } catch (error) {
      throw recoveryFailure(error, scoutId, instanceId);
    }
  }
  const progress = createProgress(flags.dryRun ? 'reading' : 'restoring');
  let plan: Awaited<ReturnType<typeof restoreArchive>>;
  try {
    plan = await restoreArchive({
      source,
      keys,
      dest,
      dryRun: flags.dryRun === true,
      onSourceBytes: (read) => progress.update(read, size),
    });
  } catch (error) {
    throw restoreFailure(error);
  } finally {
    progress.done();
  }
  if (flags.dryRun) {
    for (const path of plan.add) process.stdout.write(`add ${path}\n`);
    for (const path of plan.replace) process.stdout.write(`replace ${path}\n`);
    process.stdout.write(
      `${snapshot}: would add ${plan.add.length} and replace ${plan.replace.length} files (${plan.bytes} bytes) in ${dest}\n`,
    );
    return;
  }
  process.stdout.write(
    `restored ${snapshot} into ${dest}: ${plan.add.length} added, ${plan.replace.length} replaced, ${plan.bytes} bytes\n`,
  );
}
