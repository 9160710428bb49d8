/**
 * Accounts, sign-in and automation tokens: the answers of `/api/session`, `/api/users` and
 * `/api/automation-tokens` on both roles (src/core/http/routes/). Paths: api-paths.ts.
 */
import { z } from 'zod';

/** `POST /api/session/login`. */
export const LoginRequestSchema = z.object({
  username: z.string().min(1).max(200),
  password: z.string().min(1).max(1000),
});
export type LoginBody = z.input<typeof LoginRequestSchema>;

/** `POST /api/session/change-password`. */
export const ChangePasswordRequestSchema = z.object({
  current_password: z.string().max(1000),
  new_password: z.string().max(1000),
  confirm_new_password: z.string().max(1000),
});
export type ChangePasswordBody = z.input<typeof ChangePasswordRequestSchema>;

/** `POST /api/users` (an admin's). */
export const CreateUserRequestSchema = z.object({
  username: z.string(),
  password: z.string().max(1000),
  is_admin: z.boolean().default(false),
});
export type CreateUserBody = z.input<typeof CreateUserRequestSchema>;

/** `PUT /api/users/{id}`: the fields to change. */
export const UpdateUserRequestSchema = z.object({
  username: z.string().optional(),
  password: z.string().max(1000).optional(),
  is_admin: z.boolean().optional(),
});
export type UpdateUserBody = z.input<typeof UpdateUserRequestSchema>;

/** An account as every answer shows it (never its password hash). */
export interface PublicUser {
  id: string;
  username: string;
  is_admin: boolean;
  must_change_password: boolean;
}

/** `POST …/login`, `POST …/change-password`. */
export interface SignedIn {
  status: 'ok';
  user: PublicUser;
}

/** `GET /api/session/me`: who is calling (an automation token's request names the token too). */
export interface SessionMe {
  authenticated: boolean;
  user: PublicUser | null;
  automation_token?: AutomationTokenView;
}

/** `GET /api/users`: the admin sees every account, anyone else only their own. */
export interface UserList {
  users: PublicUser[];
  /** The running build (`version` from package.json, `commit` stamped by the build). */
  build: { version: string; commit: string };
}

/** `POST /api/users`, `PUT /api/users/{id}`. */
export interface UserReply {
  user: PublicUser;
}

/** An automation token as its owner's list shows it (never the secret). */
export interface AutomationTokenView {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  expired: boolean;
}

/** `POST /api/automation-tokens`: the secret, shown this once. */
export interface CreatedAutomationToken {
  token: string;
  automation_token: AutomationTokenView;
}

export interface AutomationTokenList {
  tokens: AutomationTokenView[];
}

/** `DELETE` of an account, an automation token, a hook file: what was deleted or revoked. */
export interface Removed {
  status: 'deleted' | 'revoked';
  id?: string;
  filename?: string;
}

/** `POST /api/session/logout`, `…/logout-all`. */
export interface StatusOk {
  status: 'ok';
}
