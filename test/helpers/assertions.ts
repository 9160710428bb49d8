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

/** A reply as the test clients give it: the parsed body as `body` (or `json`), the raw `text`. */
export interface ErrorReply {
  status: number;
  body?: unknown;
  json?: unknown;
  text?: string;
}

/**
 * Asserts an error reply: the status, a JSON body whose `detail` (string or object) says
 * something, and that it matches `about` when given.
 */
export function assertError(reply: ErrorReply, status: number, about?: RegExp): void {
  const body = 'json' in reply ? reply.json : reply.body;
  const shown = reply.text ?? JSON.stringify(body);
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${shown}`);
  assert.ok(body && typeof body === 'object', `error body is JSON: ${shown}`);
  const detail = (body as { detail?: unknown }).detail;
  assert.ok(detail !== undefined && detail !== null && detail !== '', `error has a detail: ${shown}`);
  const text = typeof detail === 'string' ? detail : JSON.stringify(detail);
  assert.ok(text.length >= 8, `detail is a meaningful message: ${shown}`);
  if (about) assert.match(text, about, `detail ${JSON.stringify(text)} should match ${about}`);
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
