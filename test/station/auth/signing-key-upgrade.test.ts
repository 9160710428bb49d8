// Upgrading a Station whose data dir holds the token signing key of earlier releases
// (`station-signing-key.pem`): at the first start the key moves into the database and the file
// goes, so Station tokens minted before the upgrade stay valid, and tokens minted after it are
// signed with the same key; a restart keeps it. PGlite, one Station (the NAS case).

import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { jwtVerify } from 'jose';
import { adminClient } from '../../helpers/http.ts';
import { mintStationToken } from '../../helpers/scout.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { archiveMeta, initiate } from '../../helpers/uploads.ts';

let station: TestServer | undefined;
after(async () => {
  await station?.dispose();
});

test('an old data dir’s signing key is adopted into the database: tokens keep verifying, the file goes', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backupd-station-upgrade-'));
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const keyFile = join(dataDir, 'station-signing-key.pem');
  writeFileSync(keyFile, pem, { mode: 0o600 });

  station = await startServer('station', { dataDir });
  assert.equal(existsSync(keyFile), false, 'the file is gone once the database holds the key');
  assert.doesNotMatch(station.output(), /PRIVATE KEY/, 'no key material in the log');

  const admin = await adminClient(station.url);
  const token = await mintStationToken(admin);
  // Signed with the data dir's old key: what the Station signed before the upgrade verifies alike.
  await jwtVerify(token, createPublicKey(privateKey), { audience: 'backupd-station' });
  const data = Buffer.from('upgrade');
  assert.equal((await initiate(station.url, token, archiveMeta(data))).status, 200);

  // A restart reads the key from the database and writes no file.
  station = await station.restart();
  assert.equal(existsSync(keyFile), false);
  assert.equal((await initiate(station.url, token, archiveMeta(data))).status, 200);
});
