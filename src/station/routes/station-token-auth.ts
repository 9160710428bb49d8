import type { Context } from 'hono';
import { hit, type Limit } from '../../core/auth/rate-limit.ts';
import { AppError, tooManyRequests, unauthorized } from '../../core/errors.ts';
import type { AppEnv } from '../../core/http/app-env.ts';
import type { StationTokenRow, StationTokens } from '../services/station-tokens.ts';

export const BACKUP_REQUESTS_PER_MINUTE = 600;
export const BACKUP_CHUNKS_PER_MINUTE = 6000;

/**
 * The limits of one Station token on `/backup/*` (issue #23 item 3: a stolen token must not
 * flood the Station). A Scout makes a few requests per job and cycle (initiate, finalize, a
 * listing and a download per drill or restore), one operation at a time, so 600 a minute
 * leaves a Scout with hundreds of jobs far below it. Chunks are counted apart: an upload sends
 * one per 32 MiB (the disk store's chunk size, smaller on a slow link), so 6,000 a minute is
 * over 3 GB/s. Counted in the Station's window counter (PostgreSQL: Stations behind one load
 * balancer count together).
 */
export const BACKUP_REQUESTS: Limit = {
  name: 'backup',
  limit: BACKUP_REQUESTS_PER_MINUTE,
  windowMs: 60_000,
};
export const BACKUP_CHUNKS: Limit = {
  name: 'backup-chunk',
  limit: BACKUP_CHUNKS_PER_MINUTE,
  windowMs: 60_000,
};

/**
 * The Station token of a `/backup/...` request, or 401; counted against the token's `limit`
 * (429 with Retry-After beyond it). A session cookie never counts here. A token that is given
 * but not accepted (invalid, expired, revoked) answers code token_rejected.
 */
export async function stationToken(
  c: Context<AppEnv>,
  tokens: StationTokens,
  limit: Limit = BACKUP_REQUESTS,
): Promise<StationTokenRow> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match?.[1]) throw unauthorized('a Station token is required: Authorization: Bearer <station token>');
  let token: StationTokenRow;
  try {
    token = await tokens.authenticate(match[1]);
  } catch (error) {
    if (!(error instanceof AppError) || error.status !== 401) throw error;
    throw new AppError(401, error.detail, {
      code: 'token_rejected',
      headers: error.headers,
      cause: error.cause,
    });
  }
  const wait = await hit(c.get('core').windows, limit, token.tokenHash);
  if (wait > 0) {
    throw tooManyRequests(
      wait,
      `too many requests with this Station token (at most ${limit.limit} a minute); try again in ${wait} seconds`,
    );
  }
  return token;
}
