export { automationTokens, sessions, settings, users } from '../../core/db/core-tables.sqlite.ts';
export { jobStates } from './scout-tables.ts';
