import type { Context } from 'hono';
import { AppError, unauthorized } from '../../core/errors.ts';
import type { StationTokenRow, StationTokens } from '../services/station-tokens.ts';

/**
 * The Station token of a `/backup/...` request, or 401. A session cookie never counts here. A
 * token that is given but not accepted (invalid, expired, revoked) answers code token_rejected.
 */
export async function stationToken(c: Context, tokens: StationTokens): Promise<StationTokenRow> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match?.[1]) throw unauthorized('a Station token is required: Authorization: Bearer <station token>');
  try {
    return await tokens.authenticate(match[1]);
  } catch (error) {
    if (!(error instanceof AppError) || error.status !== 401) throw error;
    throw new AppError(401, error.detail, {
      code: 'token_rejected',
      headers: error.headers,
      cause: error.cause,
    });
  }
}
