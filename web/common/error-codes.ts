/**
 * Badges and sentences chosen by an error's stable `code` (src/shared/protocol/error-codes.ts),
 * never by its English `detail`, which may change.
 */
import { ERROR_CODES, type ErrorCode } from '../../src/shared/protocol/error-codes.ts';

export type { ErrorCode };

export interface CodeBadge {
  text: string;
  tone: 'ok' | 'warn' | 'bad';
}

const BADGES: Partial<Record<ErrorCode, CodeBadge>> = {
  station_unreachable: { text: 'Station unreachable', tone: 'bad' },
  token_rejected: { text: 'Station token refused', tone: 'bad' },
  forbidden: { text: 'token not for this instance', tone: 'bad' },
  binding_conflict: { text: 'token bound elsewhere', tone: 'bad' },
  not_bound: { text: 'token not yet bound', tone: 'warn' },
  not_configured: { text: 'no Station configured', tone: 'warn' },
  payload_too_large: { text: 'archive too large', tone: 'bad' },
  insufficient_storage: { text: 'Station disk full', tone: 'bad' },
  uploads_paused: { text: 'uploads paused', tone: 'warn' },
  unavailable: { text: 'Station unavailable', tone: 'warn' },
  rate_limited: { text: 'rate limited', tone: 'warn' },
  station_error: { text: 'Station failed', tone: 'bad' },
  hook_failed: { text: 'pre-backup hook failed', tone: 'bad' },
  cannot_decrypt: { text: 'cannot decrypt', tone: 'bad' },
  snapshot_damaged: { text: 'snapshot damaged', tone: 'bad' },
  unsafe_entry: { text: 'unsafe entry', tone: 'bad' },
  internal: { text: 'failed on this host', tone: 'bad' },
};

/** The badge for a code; an unknown code gets a neutral one with the code itself. */
export function codeBadge(code: string): CodeBadge {
  return BADGES[code as ErrorCode] ?? { text: code.replaceAll('_', ' '), tone: 'bad' };
}

/** What a code means, in one sentence (the protocol's own), or null for an unknown code. */
export function codeMeaning(code: string): string | null {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : null;
}
