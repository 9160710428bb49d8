export { automationTokens, sessions, settings, users } from '../../core/db/core-tables.pg.ts';
export { jobSummaries } from './job-summary-tables.ts';
export { replicationCopies, replicationPulls } from './replication-tables.ts';
export {
  drills,
  instances,
  jobRetention,
  leases,
  rateWindows,
  restoreRequests,
  snapshots,
  stationKeys,
  stationTokens,
  tokenBindings,
  uploadSessions,
} from './station-tables.ts';
