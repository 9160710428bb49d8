import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { badRequest } from '../../core/errors.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import { readJson } from '../../core/http/json-body.ts';
import { isHttpUrl } from '../../shared/http-url.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../../shared/namespace.ts';
import type { StationServices } from '../services.ts';
import { stationToken } from './station-token-auth.ts';

const component = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .refine(isNamespaceComponent, `${field} must be ${NAMESPACE_RULE}`);
const hex = (field: string, lengths: string) => `${field} must be ${lengths} lowercase hex characters`;

function validTimestamp(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value)) return false;
  const date = new Date(value);
  return !Number.isNaN(date.getTime()) && date.toISOString().replace('.000Z', 'Z') === value;
}

export const InitiateSchema = z.object({
  scout_id: component('scout_id'),
  scout_instance_id: component('scout_instance_id'),
  job_name: component('job_name'),
  fingerprint: z.string().regex(/^(?:[0-9a-f]{8}|[0-9a-f]{64})$/, hex('fingerprint', '8 or 64')),
  timestamp: z.string().refine(validTimestamp, 'timestamp must be UTC in the form YYYY-MM-DDTHH:MM:SSZ'),
  archive_format: z.literal('tar.zst', { error: 'archive_format must be "tar.zst"' }),
  archive_size_bytes: z
    .number({ error: 'archive_size_bytes must be a positive integer' })
    .int('archive_size_bytes must be a positive integer')
    .positive('archive_size_bytes must be a positive integer')
    .max(Number.MAX_SAFE_INTEGER),
  archive_sha256: z.string().regex(/^[0-9a-f]{64}$/, hex('archive_sha256', '64')),
  idempotency_key: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,200}$/, 'idempotency_key must be 1 to 200 characters of A-Z a-z 0-9 . _ : -'),
  encryption_key_fingerprint: z
    .string()
    .regex(/^(?:[0-9a-f]{8}|[0-9a-f]{64})$/, hex('encryption_key_fingerprint', '8 or 64'))
    .optional(),
  advertised_url: z
    .string()
    .refine(isHttpUrl, 'advertised_url must be an http:// or https:// address')
    .optional(),
});

/** The raw request body as a Node stream: the socket itself under @hono/node-server, no web-stream layers. */
function requestBody(c: Context<AppEnv>): Readable {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming) return incoming;
  return c.req.raw.body ? Readable.fromWeb(c.req.raw.body as WebReadableStream) : Readable.from([]);
}

export function uploadRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();

  app.post('/initiate', async (c) => {
    const token = await stationToken(c, station.tokens);
    const body = await readJson(c, InitiateSchema);
    return c.json(await station.uploadSessions.initiate(token, body));
  });

  app.put('/:uploadId/chunk', async (c) => {
    const token = await stationToken(c, station.tokens);
    const offsetText = c.req.query('offset') ?? '';
    if (!/^\d+$/.test(offsetText)) throw badRequest('offset must be a nonnegative integer byte offset');
    const result = await station.uploadSessions.chunk(
      token,
      c.req.param('uploadId'),
      Number(offsetText),
      requestBody(c),
    );
    return c.json(result);
  });

  app.post('/:uploadId/finalize', async (c) => {
    const token = await stationToken(c, station.tokens);
    return c.json(await station.uploadSessions.finalize(token, c.req.param('uploadId')));
  });

  return app;
}
