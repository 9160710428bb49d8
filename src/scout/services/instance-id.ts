import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The Scout instance ID: generated once (32 hex characters) and kept in the data dir. */
export function loadInstanceId(dataDir: string): string {
  const path = join(dataDir, 'instance-id');
  try {
    const existing = readFileSync(path, 'utf8').trim();
    if (/^[0-9a-f]{16,64}$/.test(existing)) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const id = randomBytes(16).toString('hex');
  writeFileSync(`${path}.tmp`, `${id}\n`, { mode: 0o644 });
  renameSync(`${path}.tmp`, path);
  return id;
}
