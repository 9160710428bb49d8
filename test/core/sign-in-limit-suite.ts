// The sign-in limiter under load and across addresses (docs/api.md, Sign-in and access: failed
// sign-ins, 10 per 15 minutes per client address; README: TRUST_PROXY). One server per suite;
// the requests come from distinct loopback addresses (127.0.0.0/8 all reach the server), so
// each test has its own client addresses. The server clock only moves forward.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type LoginReply, loginFrom } from '../helpers/login-from.ts';
import type { TestServer } from '../helpers/server.ts';

const MINUTE_MS = 60 * 1000;
const PASSWORD = 'admin';

export type StartServer = (opts?: { dataDir?: string; env?: Record<string, string> }) => Promise<TestServer>;

function tally(replies: LoginReply[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

function assertLimited(reply: LoginReply, about?: RegExp): void {
  assert.equal(reply.status, 429, `expected 429, got ${reply.status}: ${reply.detail}`);
  const wait = Number(reply.retryAfter);
  assert.ok(Number.isInteger(wait) && wait > 0 && wait <= 900, `Retry-After ${reply.retryAfter}`);
  assert.match(reply.detail, /\d+ seconds/);
  if (about) assert.match(reply.detail, about);
}

export function signInLimitSuite(label: string, start: StartServer): void {
  describe(`${label}: sign-in limits`, () => {
    let server: TestServer;

    before(async () => {
      server = await start();
    });

    after(async () => {
      await server?.dispose();
    });

    test('300 wrong passwords sent at once from one address: at most 10 are checked, the rest are 429', async () => {
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) => loginFrom(server, '127.0.0.1', 'admin', `wrong-${i}`)),
      );
      const counts = tally(replies);
      assert.ok((counts[401] ?? 0) <= 10, `at most 10 checked (401): ${JSON.stringify(counts)}`);
      assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 300, JSON.stringify(counts));
      for (const reply of replies.filter((r) => r.status === 429)) assertLimited(reply, /address/);
      // The right password from that address waits too.
      assertLimited(await loginFrom(server, '127.0.0.1', 'admin', PASSWORD));
    });

    test("an attacker's failures do not lock the owner out from another address", async () => {
      const attacker = '127.0.0.2';
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) => loginFrom(server, attacker, 'admin', `guess-${i}`)),
      );
      assert.deepEqual(tally(replies), { 401: 10, 429: 2 });
      assertLimited(await loginFrom(server, attacker, 'admin', PASSWORD));
      const owner = await loginFrom(server, '127.0.0.3', 'admin', PASSWORD);
      assert.equal(owner.status, 200, owner.detail);
    });

    test('successful sign-ins do not count toward the limit', async () => {
      const from = '127.0.0.4';
      for (let i = 0; i < 9; i += 1)
        assert.equal((await loginFrom(server, from, 'admin', `typo-${i}`)).status, 401);
      // One at a time: an attempt holds a slot while its password is checked.
      for (let i = 0; i < 5; i += 1)
        assert.equal((await loginFrom(server, from, 'admin', PASSWORD)).status, 200);
      assert.equal(
        (await loginFrom(server, from, 'admin', 'typo-9')).status,
        401,
        'the tenth failure is checked',
      );
      assertLimited(await loginFrom(server, from, 'admin', PASSWORD));
    });

    test('without TRUST_PROXY, X-Forwarded-For is ignored', async () => {
      const from = '127.0.0.5';
      for (let i = 0; i < 10; i += 1) {
        const reply = await loginFrom(server, from, `nobody-${i}`, 'wrong-password', {
          'x-forwarded-for': `198.51.100.${i + 1}`,
        });
        assert.equal(reply.status, 401, reply.detail);
      }
      assertLimited(
        await loginFrom(server, from, 'admin', PASSWORD, { 'x-forwarded-for': '198.51.100.200' }),
        /address/,
      );
    });

    test('10 addresses × 10 wrong passwords do not lock the admin out: the right one from an 11th signs in (issue #23)', async () => {
      // Before the fix the 101st attempt on the account was 429 "for this account" for 15
      // minutes, the right password too. The per-username count now only reports.
      const attackers = Array.from({ length: 10 }, (_, i) => `127.0.1.${i + 1}`);
      const replies = await Promise.all(
        attackers.flatMap((from) =>
          Array.from({ length: 10 }, (_, i) => loginFrom(server, from, 'admin', `spray-${i}`)),
        ),
      );
      assert.deepEqual(tally(replies), { 401: 100 });
      const owner = await loginFrom(server, '127.0.1.11', 'admin', PASSWORD);
      assert.equal(owner.status, 200, owner.detail);
      // More guesses from fresh addresses: still checked, 401 with a warning, never 429 for the account.
      const guess = await loginFrom(server, '127.0.1.12', 'ADMIN', 'spray-x');
      assert.equal(guess.status, 401, guess.detail);
      assert.match(guess.detail, /over 100 failed sign-ins/);
      assert.equal(guess.retryAfter, undefined);
      // The owner can sign in from there too (after a typo), and from anywhere else.
      assert.equal((await loginFrom(server, '127.0.1.12', 'admin', PASSWORD)).status, 200);
      assert.equal((await loginFrom(server, '127.0.1.13', 'admin', PASSWORD)).status, 200);
      // Each attacker address keeps its own limit, the right password there waits too.
      assertLimited(await loginFrom(server, attackers[0] ?? '', 'admin', PASSWORD), /address/);
      // Fifteen minutes on, the account's count has lifted: a wrong password is plain 401 again.
      server.advanceClock(15 * MINUTE_MS + 1000);
      const later = await loginFrom(server, '127.0.1.12', 'admin', 'spray-y');
      assert.equal(later.status, 401);
      assert.equal(later.detail, 'wrong username or password');
      assert.equal((await loginFrom(server, attackers[0] ?? '', 'admin', PASSWORD)).status, 200);
    });

    test('with TRUST_PROXY, X-Forwarded-For counts only from a listed proxy', async () => {
      const proxy = '127.0.0.9';
      server = await restartWith(server, start, { TRUST_PROXY: `${proxy}, 10.0.0.0/8` });

      // Through the proxy: each forwarded client address has its own count.
      const first = { 'x-forwarded-for': '203.0.113.1' };
      for (let i = 0; i < 10; i += 1)
        assert.equal((await loginFrom(server, proxy, 'admin', `p-${i}`, first)).status, 401);
      assertLimited(await loginFrom(server, proxy, 'admin', PASSWORD, first), /address/);
      // Prepending a made-up address does not escape: the proxy's own entry is the last one.
      assertLimited(
        await loginFrom(server, proxy, 'admin', PASSWORD, { 'x-forwarded-for': '192.0.2.77, 203.0.113.1' }),
      );
      // Trusted hops are skipped from the right (a second proxy inside 10.0.0.0/8).
      assertLimited(
        await loginFrom(server, proxy, 'admin', PASSWORD, { 'x-forwarded-for': '203.0.113.1, 10.1.2.3' }),
      );
      const other = await loginFrom(server, proxy, 'admin', PASSWORD, { 'x-forwarded-for': '203.0.113.2' });
      assert.equal(other.status, 200, `another client behind the proxy signs in: ${other.detail}`);
      const direct = await loginFrom(server, proxy, 'admin', PASSWORD);
      assert.equal(direct.status, 200, `the proxy itself is not limited: ${direct.detail}`);

      // An IPv6 client counts by its /64: picking another address in it does not escape.
      for (let i = 0; i < 10; i += 1) {
        const xff = { 'x-forwarded-for': `2001:db8:1:2::${(i + 1).toString(16)}` };
        assert.equal((await loginFrom(server, proxy, 'admin', `v6-${i}`, xff)).status, 401);
      }
      assertLimited(
        await loginFrom(server, proxy, 'admin', PASSWORD, { 'x-forwarded-for': '2001:db8:1:2:ffff::99' }),
        /address/,
      );
      const nextBlock = await loginFrom(server, proxy, 'admin', PASSWORD, {
        'x-forwarded-for': '2001:db8:1:3::1',
      });
      assert.equal(nextBlock.status, 200, `another /64 signs in: ${nextBlock.detail}`);

      // From an address that is not a listed proxy the header is ignored.
      const from = '127.0.0.10';
      for (let i = 0; i < 10; i += 1) {
        const reply = await loginFrom(server, from, 'admin', `d-${i}`, {
          'x-forwarded-for': `203.0.113.${50 + i}`,
        });
        assert.equal(reply.status, 401, reply.detail);
      }
      assertLimited(
        await loginFrom(server, from, 'admin', PASSWORD, { 'x-forwarded-for': '203.0.113.99' }),
        /address/,
      );
    });
  });
}

/** Stops the server and starts the same role on its data dir with extra environment. */
async function restartWith(
  server: TestServer,
  start: StartServer,
  env: Record<string, string>,
): Promise<TestServer> {
  await server.stop();
  return start({ dataDir: server.dataDir, env });
}
