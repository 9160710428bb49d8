// Assertions many test files share.
import assert from 'node:assert/strict';
import type { Reply } from './http.ts';

/** Asserts a reply's status and, when `detail` is given, a string `detail` that matches it. */
export function expectStatus(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text}`);
  if (detail) {
    assert.equal(typeof reply.body?.detail, 'string', `no detail in ${reply.text}`);
    assert.match(reply.body.detail, detail);
  }
}

/** Asserts an ISO timestamp within `toleranceMs` of `expectedMs`. */
export function expectIsoNear(value: unknown, expectedMs: number, toleranceMs: number, what: string): void {
  assert.equal(typeof value, 'string', `${what} is an ISO timestamp: ${JSON.stringify(value)}`);
  const ms = Date.parse(value as string);
  assert.ok(Number.isFinite(ms), `${what} parses: ${value}`);
  assert.ok(
    Math.abs(ms - expectedMs) <= toleranceMs,
    `${what} ${value} is not within ${toleranceMs} ms of ${new Date(expectedMs).toISOString()}`,
  );
}
