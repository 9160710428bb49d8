import type { Context } from 'hono';
import { unauthorized } from '../../core/errors.ts';
import type { StationTokenRow, StationTokens } from '../services/station-tokens.ts';

/** The Station token of a `/backup/...` request, or 401. A session cookie never counts here. */
export async function stationToken(c: Context, tokens: StationTokens): Promise<StationTokenRow> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match?.[1]) throw unauthorized('a Station token is required: Authorization: Bearer <station token>');
  return tokens.authenticate(match[1]);
}
