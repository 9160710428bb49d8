import type { SettingsStore } from './settings-store.ts';

const SECTION = 'uploads';

/** Whether uploads are paused; kept in the database so a pause survives a restart. */
export function createUploadAcceptance(store: SettingsStore) {
  return {
    async paused(): Promise<boolean> {
      return (await store.read(SECTION)).paused === true;
    },
    async setPaused(paused: boolean): Promise<void> {
      await store.write(SECTION, { paused });
    },
  };
}

export type UploadAcceptance = ReturnType<typeof createUploadAcceptance>;
