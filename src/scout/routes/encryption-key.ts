import { Hono } from 'hono';
import { conflict } from '../../core/errors.ts';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import type { ScoutServices } from '../services.ts';

const keyView = (key: ScoutKey) => ({
  fingerprint: key.fingerprint,
  key_base64: key.keyBase64,
  age_identity: key.ageIdentity,
  age_recipient: key.ageRecipient,
});

/** The Scout key (legacy route name `/api/encryption-key`). */
export function encryptionKeyRoutes(scout: ScoutServices) {
  const app = new Hono<AppEnv>();
  app.use('*', adminOnly('manage'));

  app.get('/', (c) => c.json(keyView(scout.keys.current())));

  app.post('/rotate', (c) => {
    if (scout.runner.busy())
      throw conflict('an operation is running; wait for it to end (or cancel it), then rotate');
    const key = keyView(scout.keys.rotate());
    return c.json({ new_fingerprint: key.fingerprint, ...key });
  });

  return app;
}
