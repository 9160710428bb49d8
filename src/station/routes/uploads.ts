import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { type Context, Hono } from 'hono';
import type { AppEnv } from '../../core/http/app-env.ts';
import { clientAddress } from '../../core/http/client-address.ts';
import { readJson, readQuery } from '../../core/http/json-body.ts';
import {
  ChunkQuerySchema,
  FinalizeRequestSchema,
  InitiateRequestSchema,
} from '../../shared/protocol/uploads.ts';
import type { StationServices } from '../services.ts';
import { offerSocketReads } from '../storage/socket-reads.ts';
import { BACKUP_CHUNKS, stationToken } from './station-token-auth.ts';

/**
 * The raw request body as a Node stream: the socket itself under @hono/node-server, no
 * web-stream layers; a large one is offered to be read straight into the store's memory
 * (src/station/storage/socket-reads.ts).
 */
function requestBody(c: Context<AppEnv>): Readable {
  const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
  if (env?.incoming && env.outgoing) return offerSocketReads(env.incoming, env.outgoing);
  if (env?.incoming) return env.incoming;
  return c.req.raw.body ? Readable.fromWeb(c.req.raw.body as WebReadableStream) : Readable.from([]);
}

export function uploadRoutes(station: StationServices) {
  const app = new Hono<AppEnv>();

  app.post('/initiate', async (c) => {
    const token = await stationToken(c, station.tokens);
    const { advertised_url, ...body } = await readJson(c, InitiateRequestSchema);
    // Restore hints go only where the Scout connected from (or a listed host): hint-target.ts.
    const pinned = station.restoreRequests.pinHintUrl(advertised_url, clientAddress(c));
    return c.json(
      await station.uploads.initiate(token, {
        ...body,
        ...(pinned ? { advertised_url: pinned } : {}),
      }),
    );
  });

  app.put('/:uploadId/chunk', async (c) => {
    const token = await stationToken(c, station.tokens, BACKUP_CHUNKS);
    const { offset } = readQuery(c, ChunkQuerySchema);
    return c.json(await station.uploads.chunk(token, c.req.param('uploadId'), offset, requestBody(c)));
  });

  app.post('/:uploadId/finalize', async (c) => {
    const token = await stationToken(c, station.tokens);
    const declared = await readJson(c, FinalizeRequestSchema);
    return c.json(await station.uploads.finalize(token, c.req.param('uploadId'), declared));
  });

  return app;
}
