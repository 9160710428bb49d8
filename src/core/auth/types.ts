import type { PublicUser } from '../../shared/protocol/accounts.ts';

export type { PublicUser };

export const SCOPES = ['read', 'backup', 'restore', 'manage', 'replicate'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The scopes a role's automation tokens may carry. `replicate` is the Station's alone: a
 * replica Station's token that lists and downloads every snapshot and reaches nothing else
 * (src/station/routes/replication-source.ts).
 */
export const ROLE_SCOPES: Record<'station' | 'scout', readonly Scope[]> = {
  station: SCOPES,
  scout: ['read', 'backup', 'restore', 'manage'],
};

export interface UserRow {
  id: string;
  username: string;
  passwordHash: string;
  isAdmin: boolean;
  mustChangePassword: boolean;
  createdAt: number;
}

export function publicUser(user: UserRow): PublicUser {
  return {
    id: user.id,
    username: user.username,
    is_admin: user.isAdmin,
    must_change_password: user.mustChangePassword,
  };
}

export interface TokenRow {
  id: string;
  userId: string;
  name: string;
  tokenHash: string;
  scopes: string;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
}

/** Who is calling: a browser session or an automation token, with the account behind it. */
export type Auth =
  | { via: 'session'; user: UserRow; sessionHash: string }
  | { via: 'token'; user: UserRow; token: TokenRow; scopes: Scope[] };
