// Whether the Scout key has left this host: fetched from the console (Download or Reveal) or
// its fingerprint confirmed by someone who holds a copy. Until then Status warns that losing
// the host loses every snapshot. Kept in the settings table (no migration), per key: a
// rotation makes a new key that has not been saved yet.

import { clock } from '../../core/clock.ts';
import { badRequest } from '../../core/errors.ts';
import type { SettingsStore } from '../../core/settings/settings-store.ts';
import type { KeyStore } from './key-store.ts';

const SECTION = 'scout_key_saved';

export function createKeySaved(store: SettingsStore, keys: KeyStore) {
  /** When the current key was saved (ISO 8601), or null. */
  async function savedAt(): Promise<string | null> {
    const saved = await store.read(SECTION);
    const current = keys.current().fingerprint;
    return saved.fingerprint === current && typeof saved.saved_at === 'string' ? saved.saved_at : null;
  }

  /** Records that the current key was saved (the first time counts); returns when. */
  async function record(): Promise<string> {
    const earlier = await savedAt();
    if (earlier) return earlier;
    const at = clock.date().toISOString();
    await store.write(SECTION, { fingerprint: keys.current().fingerprint, saved_at: at });
    return at;
  }

  return {
    savedAt,
    record,
    /** The holder of a copy names its fingerprint; it must be the current key's. */
    async confirm(fingerprint: string): Promise<string> {
      const current = keys.current().fingerprint;
      if (fingerprint.trim().toLowerCase() !== current) {
        throw badRequest(
          `that fingerprint is not the current Scout key's (it begins ${current.slice(0, 8)}); download the key again, or check the "# fingerprint:" line of your key file`,
        );
      }
      return record();
    },
  };
}

export type KeySaved = ReturnType<typeof createKeySaved>;
