import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { type HostPolicy, hostPolicy } from './http/host-check.ts';
import { parseS3Config, type S3Config } from './s3-config.ts';

export type Role = 'station' | 'scout';

export interface ServeFlags {
  host?: string;
  port?: string;
  dataDir?: string;
  /** Scout only: adopt this instance ID on a fresh data dir (a rebuilt host). */
  instanceId?: string;
}

export interface CommonConfig {
  host: string;
  port: number;
  dataDir: string;
  initialAdminPassword: string;
  /**
   * `ALLOWED_HOSTS`: the Host names this server answers; unset, its addresses, localhost and
   * this machine's own names (http/host-check.ts).
   */
  allowedHosts: HostPolicy;
  /** `TRUST_PROXY`: proxy addresses or CIDR ranges whose `X-Forwarded-For` is believed (none: empty). */
  trustProxy: string[];
}

export interface StationConfig extends CommonConfig {
  role: 'station';
  databaseUrl: string | undefined;
  backupRoot: string;
  stagingDir: string;
  maxUploadBytes: number;
  /** `STORAGE_URL=s3://…`: snapshots in that bucket; undefined: on the disk under backupRoot. */
  s3: S3Config | undefined;
  /** `RESTORE_HINT_HOSTS`: hosts a restore hint may go to as advertised (src/station/services/hint-target.ts). */
  restoreHintHosts: string[];
}

export interface ScoutConfig extends CommonConfig {
  role: 'scout';
  scanRoot: string;
  /** Environment overrides of settings fields; saved settings fill what these leave open. */
  env: {
    station_url?: string;
    scout_id?: string;
    scout_credential?: string;
    cron_schedule?: string;
  };
  advertisedUrl: string | undefined;
  /** `--instance-id` / `SCOUT_INSTANCE_ID`: the instance ID a fresh data dir takes over. */
  adoptInstanceId: string | undefined;
}

/** A configuration problem: the CLI prints its message as one line and exits non-zero. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DEFAULT_PORTS: Record<Role, number> = { station: 6555, scout: 6556 };
const TIB = 1024 ** 4;

type Env = Record<string, string | undefined>;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function parsePort(text: string, source: string): number {
  const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${source} must be a port number from 0 to 65535, got "${text}"`);
  }
  return port;
}

function parsePositiveInt(text: string, source: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(`${source} must be a positive whole number of bytes, got "${text}"`);
  }
  return value;
}

function allowedHostsFrom(text: string | undefined, ownUrls: (string | undefined)[] = []): HostPolicy {
  try {
    return hostPolicy(text, ownUrls);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** `TRUST_PROXY`: comma- or space-separated IP addresses and CIDR ranges. */
function parseTrustProxy(text: string | undefined): string[] {
  const entries = (text ?? '').split(/[\s,]+/).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (version === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(
        `TRUST_PROXY must list IP addresses or CIDR ranges of your reverse proxies (e.g. "127.0.0.1, 10.0.0.0/8"), got "${entry}"`,
      );
    }
  }
  return entries;
}

function common(role: Role, flags: ServeFlags, env: Env): CommonConfig {
  const portText = flags.port ?? nonEmpty(env.PORT);
  const dataDir =
    flags.dataDir ?? nonEmpty(env.DATA_DIR) ?? nonEmpty(env.STATE_DIRECTORY) ?? `./data/${role}`;
  return {
    host: flags.host ?? nonEmpty(env.HOST) ?? '0.0.0.0',
    port: portText === undefined ? DEFAULT_PORTS[role] : parsePort(portText, flags.port ? '--port' : 'PORT'),
    // systemd may pass several state directories separated by ':'; the first is ours.
    dataDir: resolve(dataDir.split(':')[0] ?? dataDir),
    initialAdminPassword: env.INITIAL_ADMIN_PASSWORD ?? 'admin',
    allowedHosts: allowedHostsFrom(env.ALLOWED_HOSTS),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
  };
}

export function loadStationConfig(flags: ServeFlags, env: Env = process.env): StationConfig {
  const base = common('station', flags, env);
  const databaseUrl = nonEmpty(env.DATABASE_URL);
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const maxUpload = nonEmpty(env.MAX_UPLOAD_BYTES);
  return {
    ...base,
    role: 'station',
    databaseUrl,
    backupRoot: resolve(nonEmpty(env.BACKUP_ROOT) ?? `${base.dataDir}/snapshots`),
    stagingDir: resolve(nonEmpty(env.STAGING_DIR) ?? `${base.dataDir}/staging`),
    maxUploadBytes: maxUpload ? parsePositiveInt(maxUpload, 'MAX_UPLOAD_BYTES') : TIB,
    s3: parseS3Config(env, (message) => new ConfigError(message)),
    restoreHintHosts: (env.RESTORE_HINT_HOSTS ?? '')
      .split(/[\s,]+/)
      .filter((host) => host !== '')
      .map((host) => host.toLowerCase().replace(/^\[(.*)\]$/, '$1')),
  };
}

export function loadScoutConfig(flags: ServeFlags, env: Env = process.env): ScoutConfig {
  const base = common('scout', flags, env);
  const advertisedUrl = nonEmpty(env.ADVERTISED_URL);
  return {
    ...base,
    // The Station sends restore hints to ADVERTISED_URL: its name is one of this Scout's own.
    allowedHosts: allowedHostsFrom(env.ALLOWED_HOSTS, [advertisedUrl]),
    role: 'scout',
    scanRoot: resolve(nonEmpty(env.SCAN_ROOT) ?? '/scan'),
    env: {
      station_url: nonEmpty(env.STATION_URL),
      scout_id: nonEmpty(env.SCOUT_ID),
      scout_credential: nonEmpty(env.SCOUT_CREDENTIAL),
      cron_schedule: nonEmpty(env.CRON_SCHEDULE),
    },
    advertisedUrl,
    adoptInstanceId: adoptedInstanceId(flags, env),
  };
}

/** An instance ID to take over: as a Scout makes them (16 to 64 lowercase hex characters). */
function adoptedInstanceId(flags: ServeFlags, env: Env): string | undefined {
  const value = flags.instanceId ?? nonEmpty(env.SCOUT_INSTANCE_ID);
  if (value === undefined || /^[0-9a-f]{16,64}$/.test(value)) return value;
  const source = flags.instanceId ? '--instance-id' : 'SCOUT_INSTANCE_ID';
  throw new ConfigError(
    `${source} must be a Scout instance ID as the Station's dashboard shows it (16 to 64 lowercase hex characters), got "${value}"`,
  );
}
