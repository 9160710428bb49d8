import { Hono } from 'hono';
import { conflict } from '../../core/errors.ts';
import { adminOnly } from '../../core/http/access.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import {
  ConfirmKeySchema,
  type KeyConfirmed,
  type RotatedKey,
  type ScoutKeyView,
} from '../../shared/protocol/scout-recovery.ts';
import type { ScoutKey } from '../archive/x25519.ts';
import type { ScoutServices } from '../services.ts';

const keyView = (key: ScoutKey): ScoutKeyView => ({
  fingerprint: key.fingerprint,
  key_base64: key.keyBase64,
  age_identity: key.ageIdentity,
  age_recipient: key.ageRecipient,
});

/** The Scout key (legacy route name `/api/encryption-key`). */
export function encryptionKeyRoutes(scout: ScoutServices) {
  const app = new Hono<AppEnv>();
  app.use('*', adminOnly('manage'));

  // Whoever fetched the key holds a copy of it: that is what Status's banner waits for.
  app.get('/', async (c) => {
    const key = scout.keys.current();
    await scout.keySaved.record();
    return c.json(keyView(key));
  });

  /** "I have a copy": the fingerprint of the key file someone keeps, checked against the key. */
  app.post('/confirm', async (c) => {
    const { fingerprint } = await readJson(c, ConfirmKeySchema);
    return c.json({ key_saved_at: await scout.keySaved.confirm(fingerprint) } satisfies KeyConfirmed);
  });

  app.post('/rotate', (c) => {
    if (scout.runner.busy())
      throw conflict('an operation is running; wait for it to end (or cancel it), then rotate');
    const key = keyView(scout.keys.rotate());
    return c.json({ new_fingerprint: key.fingerprint, ...key } satisfies RotatedKey);
  });

  return app;
}
