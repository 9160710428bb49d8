import { join } from 'node:path';
import { createCertificates } from './certificates/certificates.ts';
import type { Role } from './config.ts';
import { createFileFolder } from './hooks/hook-files.ts';
import { createHooks } from './hooks/hooks.ts';
import { createNotifier } from './notify/ntfy.ts';
import type { SettingsStore } from './settings/settings-store.ts';

/** ntfy notifications, hooks and trusted certificates: the same on both roles, named per role. */
export function createIntegrations(role: Role, dataDir: string, settings: SettingsStore) {
  const hookFiles = createFileFolder(join(dataDir, 'hooks'), 'hook file', 0o700);
  const certificateFiles = createFileFolder(join(dataDir, 'certificates'), 'certificate file', 0o600);
  return {
    role,
    notifier: createNotifier(settings, role === 'station'),
    hookFiles,
    hooks: createHooks({
      store: settings,
      files: hookFiles,
      fields:
        role === 'station'
          ? { pre: 'pre_command', post: 'post_command' }
          : { pre: 'hook_pre_command', post: 'hook_post_command' },
    }),
    certificates: createCertificates(certificateFiles),
  };
}

export type Integrations = ReturnType<typeof createIntegrations>;
