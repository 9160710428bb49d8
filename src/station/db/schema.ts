export { automationTokens, sessions, settings, users } from '../../core/db/core-tables.pg.ts';
export {
  instances,
  restoreRequests,
  snapshots,
  stationTokens,
  tokenBindings,
  uploadSessions,
} from './station-tables.ts';
