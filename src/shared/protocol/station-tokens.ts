/**
 * Station tokens as the Station's `/api/credentials` shows them (src/station/routes/credentials.ts;
 * the route name and the field `credential` are the published API's).
 */
import { z } from 'zod';

/**
 * `POST /api/credentials/mint`: a Station token, shared by up to `max_registrations` instances
 * or for one; with `scout_id` and `scout_instance_id` a recovery token bound to that instance.
 */
export const MintRequestSchema = z.object({
  ttl_days: z.number().int('ttl_days must be a whole number').optional(),
  shared: z.boolean().default(false),
  max_registrations: z.number().int('max_registrations must be a whole number').optional(),
  // A recovery token: minted already bound to an existing instance (both fields or neither).
  scout_id: z.string({ error: 'scout_id must be a string' }).optional(),
  scout_instance_id: z.string({ error: 'scout_instance_id must be a string' }).optional(),
  revoke_other_tokens: z.boolean({ error: 'revoke_other_tokens must be true or false' }).default(false),
});
export type MintBody = z.input<typeof MintRequestSchema>;

/** An instance a Station token is bound to. */
export interface TokenBinding {
  scout_id: string;
  scout_instance_id: string;
  bound_at: string;
}

/** A Station token, by its hash (the token itself is shown once, when minted). */
export interface StationTokenView {
  token_hash: string;
  created_at: string;
  expires_at: string;
  expired: boolean;
  shared: boolean;
  max_registrations: number;
  registrations: TokenBinding[];
}

/** `GET /api/credentials`. */
export interface StationTokenList {
  credentials: StationTokenView[];
}

/** `POST /api/credentials/mint`: the new Station token (`credential`), shown this once. */
export interface MintedStationToken {
  credential: string;
  ttl_days: number;
  shared: boolean;
  max_registrations: number;
  message: string;
}

/** A recovery token: minted bound to an existing instance (`scout_id` and `scout_instance_id` given). */
export interface MintedRecoveryToken extends MintedStationToken {
  scout_id: string;
  scout_instance_id: string;
  other_live_tokens: number;
  revoked_rows?: number;
  affected_instances?: number;
}

/** `DELETE /api/credentials/instances/{scout}/{instance}` (and `DELETE /api/credentials/{hash}`). */
export interface StationTokensRevoked {
  revoked_rows: number;
  affected_instances: number;
  status?: 'revoked';
  token_hash?: string;
}
