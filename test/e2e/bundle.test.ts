// The built bundle dist/backupd.mjs (npm test builds it first): it runs from any working
// directory, with migrations and PGlite's files found beside it, never in the cwd.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { adminClient } from '../helpers/http.ts';
import { ROOT, runBackupd, startServer, type TestServer } from '../helpers/server.ts';

const BUNDLE = join(ROOT, 'dist/backupd.mjs');
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** An empty working directory far from the checkout. */
let cwd: string;
const servers: TestServer[] = [];

before(() => {
  if (!existsSync(BUNDLE)) {
    throw new Error(`${BUNDLE} is missing: run \`npm run build\` first (npm test does it for you)`);
  }
  cwd = mkdtempSync(join(tmpdir(), 'backupd-cwd-'));
});

after(async () => {
  await Promise.all(servers.map((server) => server.dispose()));
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

test('--version prints the package.json version', async () => {
  const result = await runBackupd(['--version'], { entry: 'dist', cwd });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`\\b${version.replaceAll('.', '\\.')}\\b`));
});

test('--help lists the station and scout commands', async () => {
  const result = await runBackupd(['--help'], { entry: 'dist', cwd });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /\bstation\b/);
  assert.match(result.stdout, /\bscout\b/);
  for (const role of ['station', 'scout']) {
    const serve = await runBackupd([role, 'serve', '--help'], { entry: 'dist', cwd });
    assert.equal(serve.code, 0, serve.stderr);
    assert.match(serve.stdout, /--data-dir/);
    assert.match(serve.stdout, /--port/);
  }
});

test('an unknown command fails with a message', async () => {
  const result = await runBackupd(['warehouse'], { entry: 'dist', cwd });
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /warehouse|unknown/i);
});

for (const role of ['station', 'scout'] as const) {
  test(`${role} serve runs from an unrelated working directory`, async () => {
    const server = await startServer(role, { entry: 'dist', cwd });
    servers.push(server);
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
    const admin = await adminClient(server.url);
    const me = await admin.get('/api/session/me');
    assert.equal(me.body.user.username, 'admin');
    assert.equal(me.body.user.must_change_password, false);
    const users = await admin.get('/api/users');
    assert.equal(users.status, 200, users.text);
    assert.equal(users.body.build.version, version);
    assert.deepEqual(readdirSync(cwd), [], 'nothing is written to the working directory');
    assert.equal(await server.stop(), 0);
  });
}
