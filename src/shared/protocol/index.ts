/** The `/backup/*` protocol between Scout and Station, and the error codes of both roles' APIs. */
export * from './drills.ts';
export * from './error-codes.ts';
export * from './fields.ts';
export * from './headers.ts';
export * from './paths.ts';
export * from './recovery.ts';
export * from './replication.ts';
export * from './snapshot-names.ts';
export * from './status-codes.ts';
export * from './uploads.ts';
