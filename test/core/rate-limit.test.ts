import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

// The limiters read `clock.now()`; clock.ts reads BACKUPD_TEST_CLOCK_FILE when it loads, so the
// variable is set before the module is imported.
const dir = mkdtempSync(join(tmpdir(), 'backupd-rate-limit-'));
const clockFile = join(dir, 'clock');
let offset = 0;
writeFileSync(clockFile, '0');
process.env.BACKUPD_TEST_CLOCK_FILE = clockFile;
const { SlidingWindowLimiter, MemoryWindows, hit, reserve } = await import(
  '../../src/core/auth/rate-limit.ts'
);

function advance(ms: number): void {
  offset += ms;
  writeFileSync(clockFile, String(offset));
}

after(() => rmSync(dir, { recursive: true, force: true }));

describe('SlidingWindowLimiter', () => {
  test('allows up to the limit, then says how long until the oldest event ages out', () => {
    const limiter = new SlidingWindowLimiter(3, 10_000);
    for (let i = 0; i < 2; i += 1) limiter.record('k');
    assert.equal(limiter.retryAfterSeconds('k'), 0);
    limiter.record('k');
    assert.equal(limiter.retryAfterSeconds('k'), 10);
    advance(4_000);
    assert.equal(limiter.retryAfterSeconds('k'), 6);
    advance(5_500);
    assert.equal(
      limiter.retryAfterSeconds('k'),
      1,
      'rounds the last half second up, never to 0 while limited',
    );
    advance(600);
    assert.equal(limiter.retryAfterSeconds('k'), 0);
  });

  test('the window slides: only the events inside it count', () => {
    const limiter = new SlidingWindowLimiter(3, 10_000);
    limiter.record('k');
    advance(3_000);
    limiter.record('k');
    advance(3_000);
    limiter.record('k');
    // Events at 0 s, 3 s and 6 s (now): the first ages out at 10 s.
    assert.equal(limiter.retryAfterSeconds('k'), 4);
    advance(4_100);
    assert.equal(limiter.retryAfterSeconds('k'), 0, 'two events left in the window');
    limiter.record('k');
    // Events at 3 s, 6 s and 10.1 s: the one at 3 s ages out at 13 s.
    assert.equal(limiter.retryAfterSeconds('k'), 3);
  });

  test('with more events than the limit, waits until enough have aged out', () => {
    const limiter = new SlidingWindowLimiter(2, 10_000);
    limiter.record('k');
    advance(1_000);
    limiter.record('k');
    advance(1_000);
    limiter.record('k');
    // Events at 0, 1 and 2 s with limit 2: below the limit again once 0 s and 1 s are gone.
    assert.equal(limiter.retryAfterSeconds('k'), 9);
  });

  test('keys are counted separately', () => {
    const limiter = new SlidingWindowLimiter(2, 60_000);
    limiter.record('alice');
    limiter.record('alice');
    assert.ok(limiter.retryAfterSeconds('alice') > 0);
    assert.equal(limiter.retryAfterSeconds('bob'), 0);
    limiter.record('bob');
    assert.equal(limiter.retryAfterSeconds('bob'), 0);
  });

  test('the sign-in shape: 10 failures per 15 minutes give a Retry-After of at most 900 s', () => {
    const limiter = new SlidingWindowLimiter(10, 15 * 60_000);
    for (let i = 0; i < 10; i += 1) limiter.record('user');
    const wait = limiter.retryAfterSeconds('user');
    assert.ok(wait > 0 && wait <= 900, `wait ${wait}`);
    advance(15 * 60_000 + 1_000);
    assert.equal(limiter.retryAfterSeconds('user'), 0);
  });

  test('many keys do not break counting (sweep of old entries)', () => {
    const limiter = new SlidingWindowLimiter(1, 1_000);
    limiter.record('kept');
    advance(2_000);
    for (let i = 0; i < 10_050; i += 1) limiter.record(`k${i}`);
    assert.equal(limiter.retryAfterSeconds('kept'), 0);
    assert.equal(limiter.retryAfterSeconds('k10049'), 1);
  });
});

const limit = (n: number, windowMs = 60_000) => ({ name: `l${n}-${windowMs}`, limit: n, windowMs });

describe("reserve (MemoryWindows, the Scout's counter; the Station's is tested in shared-state.postgres)", () => {
  test('counts the attempt under every key, or under none when any key is over its limit', async () => {
    const windows = new MemoryWindows();
    const byClient = limit(2);
    const byUser = limit(3);
    const slots = (client: string) => [[byClient, client] as const, [byUser, 'alice'] as const];
    assert.equal((await reserve(windows, slots('a'))).wait, 0);
    assert.equal((await reserve(windows, slots('a'))).wait, 0);
    // Two held for client a: a third is refused and counted nowhere.
    const third = await reserve(windows, slots('a'));
    assert.equal(third.wait, 60);
    assert.equal(third.release, undefined);
    assert.equal('blockedBy' in third ? third.blockedBy : -1, 0);
    // Another client takes alice's third slot (the refused attempt did not count for alice);
    // then alice is full for everyone.
    assert.equal((await reserve(windows, slots('b'))).wait, 0);
    const blocked = await reserve(windows, slots('c'));
    assert.ok(blocked.wait > 0 && 'blockedBy' in blocked && blocked.blockedBy === 1);
  });

  test('a limit that only flags counts the attempt but never refuses it (issue #23: no lock-out)', async () => {
    const windows = new MemoryWindows();
    const byClient = limit(5);
    const byUser = { ...limit(3), onlyFlags: true };
    const attempt = (client: string) =>
      reserve(windows, [[byClient, client] as const, [byUser, 'alice'] as const]);
    for (const client of ['a', 'b', 'c']) {
      const r = await attempt(client);
      assert.ok(r.release);
      assert.deepEqual(r.flagged, []);
    }
    const fourth = await attempt('d');
    assert.ok(fourth.release, 'not refused');
    assert.equal(fourth.flagged.length, 1);
    assert.equal(fourth.flagged[0]?.limit, byUser);
    assert.equal(fourth.flagged[0]?.wait, 60);
    // Taken back, it leaves the user's count at its ceiling: the next one is flagged, not refused.
    await fourth.release();
    const fifth = await attempt('e');
    assert.ok(fifth.release);
    assert.equal(fifth.flagged.length, 1);
  });

  test('parallel attempts: exactly the limit pass', async () => {
    const windows = new MemoryWindows();
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => reserve(windows, [[limit(10, 15 * 60_000), 'x']])),
    );
    assert.equal(replies.filter((r) => r.wait === 0).length, 10);
    for (const r of replies.filter((r) => r.wait > 0)) assert.ok(r.wait > 0 && r.wait <= 900);
  });

  test('release takes the attempt back under every key', async () => {
    const windows = new MemoryWindows();
    const byClient = limit(1);
    const byUser = limit(1);
    const held = await reserve(windows, [
      [byClient, 'a'],
      [byUser, 'bob'],
    ]);
    assert.ok(held.release);
    assert.ok((await reserve(windows, [[byClient, 'a']])).wait > 0);
    await held.release();
    assert.equal((await reserve(windows, [[byClient, 'a']])).wait, 0);
    assert.equal((await reserve(windows, [[byUser, 'bob']])).wait, 0);
  });

  test('the window ends: a new one starts with the next event', async () => {
    const windows = new MemoryWindows();
    const l = limit(2, 10_000);
    assert.equal((await reserve(windows, [[l, 'k']])).wait, 0);
    advance(4_000);
    assert.equal((await reserve(windows, [[l, 'k']])).wait, 0);
    assert.equal((await reserve(windows, [[l, 'k']])).wait, 6, 'the window began with the first event');
    advance(5_500);
    assert.equal((await reserve(windows, [[l, 'k']])).wait, 1, 'never 0 while limited');
    advance(600);
    assert.equal((await reserve(windows, [[l, 'k']])).wait, 0);
  });

  test('a take-back for a window that has ended does not touch the new one', async () => {
    const windows = new MemoryWindows();
    const first = await windows.add('k', 1_000);
    advance(1_500);
    await windows.add('k', 1_000);
    await windows.takeBack('k', first.windowEnd);
    assert.equal((await windows.add('k', 1_000)).count, 2);
  });
});

describe('hit (the API shape)', () => {
  test('1,200 per minute, the 1,201st is refused, a new window starts after', async () => {
    const windows = new MemoryWindows();
    const api = limit(1200);
    for (let i = 0; i < 1200; i += 1) assert.equal(await hit(windows, api, 'client'), 0);
    const wait = await hit(windows, api, 'client');
    assert.ok(wait > 0 && wait <= 60, `wait ${wait}`);
    assert.equal(await hit(windows, api, 'other'), 0, 'keys are counted separately');
    advance(60_000);
    assert.equal(await hit(windows, api, 'client'), 0);
  });

  test('many keys do not break counting (ended windows are dropped)', async () => {
    const windows = new MemoryWindows();
    const one = limit(1, 1_000);
    for (let i = 0; i < 10_050; i += 1) await hit(windows, one, `k${i}`);
    advance(2_000);
    assert.equal(await hit(windows, one, 'k0'), 0);
    assert.equal(await hit(windows, one, 'fresh'), 0);
    assert.ok((await hit(windows, one, 'fresh')) > 0);
  });
});
