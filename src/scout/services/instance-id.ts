import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../core/config.ts';
import { logger } from '../../core/log.ts';

const log = logger.child({ mod: 'scout/instance-id' });

/**
 * The Scout instance ID: generated once (32 hex characters) and kept in the data dir. A
 * fresh data dir takes `adopt` instead (`--instance-id` / `SCOUT_INSTANCE_ID`), so a rebuilt
 * host continues the old instance's history; a data dir that has an ID keeps it, and
 * `adopt` must then be that same ID.
 */
export function loadInstanceId(dataDir: string, adopt?: string): string {
  const path = join(dataDir, 'instance-id');
  try {
    const existing = readFileSync(path, 'utf8').trim();
    if (/^[0-9a-f]{16,64}$/.test(existing)) {
      if (adopt !== undefined && adopt !== existing) {
        throw new ConfigError(
          `this Scout's data dir already has the instance ID ${existing}; SCOUT_INSTANCE_ID (--instance-id) ${adopt} is taken only by a fresh data dir: unset it, or start on an empty data dir to continue ${adopt}`,
        );
      }
      return existing;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const id = adopt ?? randomBytes(16).toString('hex');
  writeFileSync(`${path}.tmp`, `${id}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
  if (adopt) log.info({ scout_instance_id: id }, 'took over the instance ID of a previous installation');
  return id;
}
