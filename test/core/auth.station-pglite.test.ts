// Sign-in, accounts, automation tokens and the sign-in limiter on a Station with its embedded
// PGlite storage.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '../helpers/http.ts';
import { startServer } from '../helpers/server.ts';
import { authSuite } from './auth-suite.ts';
import { signInLimitSuite } from './sign-in-limit-suite.ts';

authSuite(
  'station (PGlite)',
  (opts) => startServer('station', { dataDir: opts?.dataDir }),
  'service_session',
);
signInLimitSuite('station sign-in limiter (PGlite)', (opts) => startServer('station', opts));

test('station (PGlite): INITIAL_ADMIN_PASSWORD sets the first admin password, which must still be changed', async () => {
  const server = await startServer('station', { env: { INITIAL_ADMIN_PASSWORD: 'some-custom-pass' } });
  try {
    const client = new Client(server.url);
    const refused = await client.login('admin', 'admin');
    assert.equal(refused.status, 401, refused.text);
    assert.ok(refused.body.detail, 'the default password does not work');

    const login = await client.login('admin', 'some-custom-pass');
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.user.username, 'admin');
    assert.equal(login.body.user.is_admin, true);
    assert.equal(login.body.user.must_change_password, true);
    const users = await client.get('/api/users');
    assert.equal(users.status, 403, users.text);
    assert.match(users.body.detail, /password/i);
    const changed = await client.post('/api/session/change-password', {
      current_password: 'some-custom-pass',
      new_password: 'a-new-admin-password',
      confirm_new_password: 'a-new-admin-password',
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await client.get('/api/users')).status, 200);
    assert.ok(!server.output().includes('some-custom-pass'), 'the initial password is not logged');
  } finally {
    await server.dispose();
  }
});
