import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { scryptSync } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { hashPassword, verifyPassword } from '../../src/core/auth/secrets.ts';
import { ADMIN_PASSWORD, adminClient, Client } from '../helpers/http.ts';
import { startServer } from '../helpers/server.ts';

const SECRETS = fileURLToPath(new URL('../../src/core/auth/secrets.ts', import.meta.url));

test('a new password hash verifies, and one of the older scrypt parameters (N = 2^14) still does', async () => {
  const stored = await hashPassword('correct horse');
  assert.equal(await verifyPassword('correct horse', stored), true);
  assert.equal(await verifyPassword('wrong horse', stored), false);
  const salt = Buffer.from('0123456789abcdef');
  const old = scryptSync('correct horse', salt, 32, { N: 16384, r: 8, p: 1 });
  const legacy = ['scrypt', 16384, 8, 1, salt.toString('base64'), old.toString('base64')].join('$');
  assert.equal(await verifyPassword('correct horse', legacy), true);
});

// glibc (Linux): a freed mapping of at most 32 MiB raises malloc's mmap threshold to its size
// for the rest of the process, so later blocks of up to that size come from the heap and the
// arenas keep up to twice that much unused memory (issue #27). Hashing a password must leave
// the threshold alone: a 12 MiB buffer allocated after it still gets a mapping of its own.
test('hashing a password leaves malloc mapping a large buffer on its own (glibc threshold unmoved)', () => {
  if (process.platform !== 'linux') return;
  const script = `
    const { readFileSync } = await import('node:fs');
    const { hashPassword } = await import(${JSON.stringify(SECRETS)});
    await hashPassword('correct horse');
    const size = 12 * 1024 * 1024;
    const mapped = () => readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((line) => {
      const [from, to] = line.split(' ')[0].split('-').map((x) => parseInt(x, 16));
      return to - from === size + 4096;
    }).length;
    const before = mapped();
    const buffer = Buffer.allocUnsafeSlow(size).fill(1);
    console.log(mapped() - before, buffer.length);
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.trim().split(' ')[0], '1', `the 12 MiB buffer came from the heap: ${out}`);
});

test('a sign-in stores a password hashed with older parameters anew (N = 2^15)', async () => {
  const scout = await startServer('scout');
  try {
    await adminClient(scout.url);
    const salt = Buffer.from('0123456789abcdef');
    const old = scryptSync(ADMIN_PASSWORD, salt, 32, { N: 16384, r: 8, p: 1 });
    const legacy = ['scrypt', 16384, 8, 1, salt.toString('base64'), old.toString('base64')].join('$');
    const db = new DatabaseSync(join(scout.dataDir, 'scout.db'));
    const stored = () =>
      (
        db.prepare("SELECT password_hash FROM users WHERE username = 'admin'").get() as {
          password_hash: string;
        }
      ).password_hash;
    try {
      db.prepare("UPDATE users SET password_hash = ? WHERE username = 'admin'").run(legacy);
      const reply = await new Client(scout.url).login('admin', ADMIN_PASSWORD);
      assert.equal(reply.status, 200, reply.text);
      assert.match(stored(), /^scrypt\$32768\$8\$1\$/);
      assert.equal(await verifyPassword(ADMIN_PASSWORD, stored()), true);
    } finally {
      db.close();
    }
  } finally {
    await scout.dispose();
  }
});
