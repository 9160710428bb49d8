/**
 * The typed contract of every HTTP answer of both roles: the `/backup/*` protocol between Scout
 * and Station (paths.ts, uploads.ts, recovery.ts, drills.ts, fields.ts), the `/api/*` of each
 * role (api-paths.ts and one file of answer types per area), header names and error codes.
 * Routes, services, the Scout's client, the web UIs and the tests import from here. Files the
 * browser bundles import for values (api-paths.ts, error-codes.ts, headers.ts) hold no zod.
 */
export * from './accounts.ts';
export * from './api-paths.ts';
export * from './drills.ts';
export * from './error-codes.ts';
export * from './fields.ts';
export * from './headers.ts';
export * from './integrations.ts';
export * from './job-key.ts';
export * from './jobs.ts';
export * from './overview.ts';
export * from './paths.ts';
export * from './recovery.ts';
export * from './replication.ts';
export * from './restore-requests.ts';
export * from './retention.ts';
export * from './scout-jobs.ts';
export * from './scout-recovery.ts';
export * from './scout-status.ts';
export * from './settings.ts';
export * from './snapshot-file.ts';
export * from './snapshot-names.ts';
export * from './snapshots.ts';
export * from './station-tokens.ts';
export * from './status-codes.ts';
export * from './uploads.ts';
