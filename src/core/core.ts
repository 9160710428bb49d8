import { createAccounts } from './auth/accounts.ts';
import { createAutomationTokens } from './auth/automation-tokens.ts';
import { MemoryWindows, type WindowCounter } from './auth/rate-limit.ts';
import { createSessions } from './auth/sessions.ts';
import type { Role } from './config.ts';
import type { CoreStorage } from './db/core-db.ts';
import { createSettingsStore } from './settings/settings-store.ts';

/**
 * The services every role shares, bound to that role's database and cookie. `windows` counts
 * the rate limits: a Station on PostgreSQL passes its database's counter (several Stations
 * count together); the Scout and a Station on PGlite (one process each) keep them in memory.
 */
export function createCore(role: Role, storage: CoreStorage, windows: WindowCounter = new MemoryWindows()) {
  const accounts = createAccounts(storage.db, storage.tables);
  return {
    role,
    cookieName: role === 'station' ? 'service_session' : 'service_scout_session',
    storage,
    windows,
    accounts,
    sessions: createSessions(storage.db, storage.tables, accounts, windows),
    tokens: createAutomationTokens(storage.db, storage.tables),
    settings: createSettingsStore(storage.db, storage.tables),
  };
}

export type Core = ReturnType<typeof createCore>;
