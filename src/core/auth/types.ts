export const SCOPES = ['read', 'backup', 'restore', 'manage'] as const;
export type Scope = (typeof SCOPES)[number];

export interface UserRow {
  id: string;
  username: string;
  passwordHash: string;
  isAdmin: boolean;
  mustChangePassword: boolean;
  createdAt: number;
}

/** A user record as the API shows it. */
export interface PublicUser {
  id: string;
  username: string;
  is_admin: boolean;
  must_change_password: boolean;
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
