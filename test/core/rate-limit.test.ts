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
const { SlidingWindowLimiter, FixedWindowLimiter, reserve } = await import(
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

  test('reset forgets a key', () => {
    const limiter = new SlidingWindowLimiter(1, 60_000);
    limiter.record('k');
    assert.equal(limiter.retryAfterSeconds('k'), 60);
    limiter.reset('k');
    assert.equal(limiter.retryAfterSeconds('k'), 0);
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

describe('reserve', () => {
  test('counts the attempt under every key before anything else can run, or under none', () => {
    const byClient = new SlidingWindowLimiter(2, 60_000);
    const byUser = new SlidingWindowLimiter(3, 60_000);
    const slots = (client: string) => [[byClient, client] as const, [byUser, 'alice'] as const];
    const first = reserve(slots('a'));
    const second = reserve(slots('a'));
    assert.equal(first.wait, 0);
    assert.equal(second.wait, 0);
    // Two held for client a: a third is refused at once and counted nowhere.
    const third = reserve(slots('a'));
    assert.ok(third.wait > 0);
    assert.equal(third.release, undefined);
    assert.equal(third.wait > 0 && 'blockedBy' in third ? third.blockedBy : -1, 0);
    assert.equal(byUser.retryAfterSeconds('alice'), 0, 'the refused attempt did not count for alice');
    // Another client takes alice's third slot; then alice is full for everyone.
    assert.equal(reserve(slots('b')).wait, 0);
    const blocked = reserve(slots('c'));
    assert.ok(blocked.wait > 0 && 'blockedBy' in blocked && blocked.blockedBy === 1);
  });

  test('release takes the attempt back under every key', () => {
    const byClient = new SlidingWindowLimiter(1, 60_000);
    const byUser = new SlidingWindowLimiter(1, 60_000);
    const held = reserve([
      [byClient, 'a'],
      [byUser, 'bob'],
    ]);
    assert.ok(held.release);
    assert.ok(byClient.retryAfterSeconds('a') > 0);
    held.release();
    assert.equal(byClient.retryAfterSeconds('a'), 0);
    assert.equal(byUser.retryAfterSeconds('bob'), 0);
  });

  test('forget removes one event of that time only', () => {
    const limiter = new SlidingWindowLimiter(2, 60_000);
    const at = limiter.record('k');
    limiter.record('k');
    limiter.forget('k', at);
    assert.equal(limiter.retryAfterSeconds('k'), 0, 'one event left');
    limiter.forget('k', at + 12345);
    limiter.record('k');
    assert.ok(limiter.retryAfterSeconds('k') > 0);
  });
});

describe('FixedWindowLimiter', () => {
  test('allows the limit per window, then returns the seconds until the window resets', () => {
    const limiter = new FixedWindowLimiter(3, 60_000);
    assert.equal(limiter.hit('a'), 0);
    assert.equal(limiter.hit('a'), 0);
    assert.equal(limiter.hit('a'), 0);
    assert.equal(limiter.hit('a'), 60);
    advance(30_000);
    assert.equal(limiter.hit('a'), 30);
    advance(29_500);
    assert.equal(limiter.hit('a'), 1, 'never 0 while limited');
    advance(600);
    assert.equal(limiter.hit('a'), 0, 'a new window starts');
    assert.equal(limiter.hit('a'), 0);
    assert.equal(limiter.hit('a'), 0);
    assert.ok(limiter.hit('a') > 0);
  });

  test('keys are counted separately', () => {
    const limiter = new FixedWindowLimiter(1, 60_000);
    assert.equal(limiter.hit('10.0.0.1'), 0);
    assert.ok(limiter.hit('10.0.0.1') > 0);
    assert.equal(limiter.hit('10.0.0.2'), 0);
  });

  test('the API shape: 1,200 per minute, the 1,201st is refused', () => {
    const limiter = new FixedWindowLimiter(1200, 60_000);
    for (let i = 0; i < 1200; i += 1) assert.equal(limiter.hit('client'), 0);
    const wait = limiter.hit('client');
    assert.ok(wait > 0 && wait <= 60, `wait ${wait}`);
    advance(60_000);
    assert.equal(limiter.hit('client'), 0);
  });

  test('many keys do not break counting (sweep of old windows)', () => {
    const limiter = new FixedWindowLimiter(1, 1_000);
    for (let i = 0; i < 10_050; i += 1) limiter.hit(`k${i}`);
    advance(2_000);
    assert.equal(limiter.hit('k0'), 0);
    assert.equal(limiter.hit('fresh'), 0);
    assert.ok(limiter.hit('fresh') > 0);
  });
});
