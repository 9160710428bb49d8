// Hostile inputs for the route fuzz (fuzz-routes*.test.ts), from a seeded random source:
// path segments, query values, Range and other headers, JSON values and whole documents,
// content types and multipart forms.

// ---------------------------------------------------------------------------------------------
// Seeded randomness

export interface Rng {
  next(): number;
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  sample<T>(items: readonly T[], k: number): T[];
}

/** mulberry32: small, fast and the same sequence for the same seed on every machine. */
export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => items[rng.int(items.length)] as (typeof items)[number],
    sample(items, k) {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = rng.int(i + 1);
        [copy[i], copy[j]] = [copy[j] as (typeof copy)[number], copy[i] as (typeof copy)[number]];
      }
      return copy.slice(0, k);
    },
  };
  return rng;
}

// ---------------------------------------------------------------------------------------------
// Hostile inputs

/** Path segments exactly as sent (already percent-encoded where needed); the first ones always run. */
export const HOSTILE_SEGMENTS: readonly string[] = [
  '%00',
  'a%00b',
  '%FF',
  'x'.repeat(3000),
  '%2e%2e',
  '%C0%AE%C0%AE',
  '%ED%A0%80',
  '%',
  '%ZZ',
  'a%2',
  '..',
  '.',
  '%2E',
  '.hidden',
  '%41'.repeat(1000),
  'a'.repeat(65),
  '%F0%9F%92%A9',
  '%C3%A9t%C3%A9',
  '%E2%80%AE',
  '%0A',
  '%0D%0A',
  '%09',
  '%20',
  '%2F',
  '%2F..%2F..%2Fetc%2Fpasswd',
  '%5C..%5Cwin',
  '-1',
  '0',
  '99999999999999999999',
  '1e308',
  'NaN',
  'null',
  '__proto__',
  'constructor',
  "'%20OR%201=1--",
  '%3Cscript%3E',
  '\u00ff\u00fe',
  '~',
  '*',
  ':',
  'a;b',
  '@',
  '%24(id)',
];
export const MUST_SEGMENTS = 5;

/** Query values exactly as sent. */
export const HOSTILE_QUERY_VALUES: readonly string[] = [
  '%00',
  'a%00b',
  '%FF',
  '%',
  '-1',
  '1e308',
  '18446744073709551616',
  '99999999999999999999999999999',
  'NaN',
  '',
  'x'.repeat(3000),
  '%2e%2e%2f%2e%2e',
  '../..',
  '..',
  '/',
  '/etc',
  'true%00',
  '%E2%80%AE',
  '0x10',
  '%2B1',
  '%201',
  '1.5',
  '\u00ff',
];

/** `Range` headers for downloads: reversed, beyond 2**64, suffixes, lists, other units. */
export const HOSTILE_RANGES: readonly string[] = [
  'bytes=-1',
  'bytes=0-',
  'bytes=5-2',
  'bytes=0-18446744073709551616',
  'bytes=99999999999999999999-',
  'bytes=-99999999999999999999',
  'bytes=0-0,1-1',
  'bytes=',
  'bytes=-0',
  'bytes=1e308-',
  'bytes=0x10-',
  'items=0-1',
  'bytes=%00-1',
];

/** Other request headers a route may read (host, origin, proxies, encodings, ids). */
export const HOSTILE_HEADERS: readonly Record<string, string>[] = [
  { host: '%00' },
  { host: 'x'.repeat(3000) },
  { host: '[::1' },
  { host: 'a b:-1' },
  { origin: 'null' },
  { origin: 'http://[' },
  { origin: `http://${'x'.repeat(3000)}` },
  { 'sec-fetch-site': 'cross-site' },
  { 'x-forwarded-for': '%00, not-an-address, ::ffff:' },
  { 'x-forwarded-for': 'x'.repeat(3000) },
  { 'x-forwarded-proto': 'https,,,\u00ff' },
  { 'accept-encoding': 'gzip;q=%00, *;q=-1' },
  { 'if-none-match': 'x'.repeat(3000) },
  { range: 'bytes=5-2' },
  { expect: '100-continue' },
];

/** JSON values as raw JSON text (so numbers beyond double precision go out as written). */
export const HOSTILE_JSON: readonly string[] = [
  'null',
  'true',
  '0',
  '-1',
  '-0',
  '1.5',
  '1e308',
  '-1e308',
  '1e999',
  '18446744073709551616',
  '9007199254740993',
  '-9223372036854775809',
  '""',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  JSON.stringify('x'.repeat(3000)),
  JSON.stringify('y'.repeat(100_000)),
  '"../../../etc/passwd"',
  '"%00"',
  '"%FF"',
  '"é🙂"',
  '"\\n\\r\\t"',
  '[]',
  '[null]',
  '[[[[[]]]]]',
  '{}',
  '{"__proto__":{"is_admin":true}}',
  '"2026-02-30T25:61:61Z"',
  '"true"',
  '"123"',
  '"   "',
  '{"$gt":""}',
  '["read","read"]',
  '["manage","bogus"]',
];

/** Whole bodies that are not what any route wants. */
export const HOSTILE_DOCUMENTS: readonly string[] = [
  '{',
  '{"a":',
  '[1,2',
  'nul',
  "{'a':1}",
  '\uFEFF{}',
  '{}x',
  'null',
  '[]',
  '"str"',
  '123',
  'true',
  '{}',
  '1e999',
  '-0',
  '   ',
  '{"a":1,"a":2}',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  `${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`,
];

export const CONTENT_TYPES: readonly (string | undefined)[] = [
  'application/json',
  'application/json; charset=utf-16',
  'text/plain',
  'application/octet-stream',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'multipart/form-data',
  'a/b/c;;;=',
  undefined,
];

export interface Body {
  contentType?: string;
  bytes: Buffer;
  label: string;
}

const json = (text: string, contentType: string | undefined = 'application/json'): Body => ({
  contentType,
  bytes: Buffer.from(text),
  label: text.length > 80 ? `${text.slice(0, 60)}…(${text.length} chars)` : text,
});

/** `base` with `field` set to the raw JSON text `value`. */
function withField(base: Record<string, unknown>, field: string, value: string): string {
  const entries = Object.entries(base).filter(([k]) => k !== field);
  const parts = entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  parts.push(`${JSON.stringify(field)}:${value}`);
  return `{${parts.join(',')}}`;
}

function multipart(field: string, filename: string, content: Buffer, boundary = 'fuzzboundary'): Body {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    'latin1',
  );
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    bytes: Buffer.concat([head, content, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    label: `multipart ${field} filename=${JSON.stringify(filename.slice(0, 40))}`,
  };
}

const GENERIC_FIELDS = [
  'id',
  'username',
  'password',
  'relative_path',
  'status',
  'ttl_days',
  'name',
  'scopes',
];
const MULTIPART_FIELDS = ['hook_file', 'certificate_file'];
const HOSTILE_FILENAMES = [
  '../../../etc/passwd',
  'a\u0000b',
  'x'.repeat(3000),
  '',
  '.',
  '..',
  '\u00ff\u00fe.pem',
  'dir/name.sh',
  '.hidden',
  'é🙂.sh',
];

/**
 * Bodies for a route whose valid body is `base` (undefined: none known): hostile documents
 * under every content type, the base with one field made hostile, invalid UTF-8, an
 * over-limit document and multipart forms. `count` of them, the first few always.
 */
export function hostileBodies(rng: Rng, base: Record<string, unknown> | undefined, count: number): Body[] {
  const fields = [...new Set([...Object.keys(base ?? {}), ...GENERIC_FIELDS, 'config', '__proto__'])];
  const start = base ?? {};
  const always: Body[] = [
    json('{'),
    json(withField(start, rng.pick(fields), '"a\\u0000b"')),
    json(withField(start, rng.pick(fields), '18446744073709551616')),
    {
      contentType: 'application/json',
      bytes: Buffer.concat([
        Buffer.from(`{"${rng.pick(fields)}":"`),
        Buffer.from([0xff, 0xfe, 0xc0, 0x80]),
        Buffer.from('"}'),
      ]),
      label: 'invalid UTF-8 in a string',
    },
    json(withField(start, rng.pick(fields), JSON.stringify('z'.repeat(1024 * 1024 + 10)))),
  ];
  const pool: Body[] = [];
  for (const doc of HOSTILE_DOCUMENTS) pool.push(json(doc), json(doc, rng.pick(CONTENT_TYPES)));
  for (const field of fields) {
    for (const value of rng.sample(HOSTILE_JSON, 6)) pool.push(json(withField(start, field, value)));
  }
  if (base) {
    for (const type of CONTENT_TYPES) pool.push(json(JSON.stringify(base), type));
    for (const field of Object.keys(base)) pool.push(json(JSON.stringify({ ...base, [field]: undefined })));
  }
  for (const field of [...MULTIPART_FIELDS, 'file']) {
    for (const name of rng.sample(HOSTILE_FILENAMES, 3))
      pool.push(multipart(field, name, Buffer.from('#!/bin/sh\n')));
  }
  pool.push(
    {
      contentType: 'multipart/form-data; boundary=nope',
      bytes: Buffer.from('--other\r\ngarbage'),
      label: 'broken multipart',
    },
    {
      contentType: 'multipart/form-data; boundary=',
      bytes: Buffer.from('--\r\n\r\n--'),
      label: 'empty boundary',
    },
    { contentType: 'application/octet-stream', bytes: Buffer.from([0, 1, 2, 0xff, 0xfe]), label: 'binary' },
    {
      contentType: 'application/x-www-form-urlencoded',
      bytes: Buffer.from('a=%00&b=%FF&a[]=1'),
      label: 'form fields',
    },
  );
  return [...always, ...rng.sample(pool, Math.max(0, count - always.length))];
}
