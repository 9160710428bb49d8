export { automationTokens, sessions, settings, users } from '../../core/db/core-tables.pg.ts';
export {
  drills,
  instances,
  restoreRequests,
  snapshots,
  stationTokens,
  tokenBindings,
  uploadSessions,
} from './station-tables.ts';
