/** The Scout key as a file to keep off the host, and the browser download that saves it. */
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { ScoutKeyView } from '../../src/shared/protocol/scout-recovery.ts';
import { api } from '../common/api.ts';

/** The key as an age identity file: `age -d -i <file>` decrypts this Scout's snapshots. */
function identityFile(key: ScoutKeyView, scoutId: string): string {
  return [
    key.age_identity,
    `# backupd Scout key of ${scoutId}`,
    `# fingerprint: ${key.fingerprint}`,
    `# public key: ${key.age_recipient}`,
    `# Scout key (base64url, for a restore on another Scout): ${key.key_base64}`,
    '',
  ].join('\n');
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** GET /api/encryption-key (which records the key as saved: key_saved_at). */
export const fetchKey = () => api.get<ScoutKeyView>(scoutPaths.encryptionKey);

/** Fetches the key and saves it as `backupd-scout-key-<scout>-<fingerprint>.txt`. */
export async function downloadKeyFile(scoutId: string): Promise<ScoutKeyView> {
  const key = await fetchKey();
  download(`backupd-scout-key-${scoutId}-${key.fingerprint.slice(0, 8)}.txt`, identityFile(key, scoutId));
  return key;
}
