/**
 * Every `/api/*` address of both roles, built in this one place: the web UIs call these, the
 * roles mount their route groups under `API_ROOTS` (the rest of each shape is in its route
 * file), the tests call them too. No zod here: the browser bundles import this file.
 */
import type { JobKey } from './job-key.ts';

export const API_ROOTS = {
  session: '/api/session',
  users: '/api/users',
  automationTokens: '/api/automation-tokens',
  ntfy: '/api/ntfy',
  hooks: '/api/hooks',
  certificates: '/api/certificates',
  settings: '/api/settings',
  restoreRequests: '/api/restore-requests',
  // The Station's.
  overview: '/api/overview',
  jobs: '/api/jobs',
  snapshots: '/api/snapshots',
  instances: '/api/instances',
  retention: '/api/retention',
  stationUploads: '/api/admin/uploads',
  verify: '/api/admin/verify',
  stationTokens: '/api/credentials',
  replication: '/api/replication',
  // The Scout's.
  status: '/api/status',
  scoutUploads: '/api/uploads',
  directories: '/api/directories',
  encryptionKey: '/api/encryption-key',
  recovery: '/api/recovery',
  drills: '/api/drills',
} as const;

const seg = (part: string | number) => encodeURIComponent(String(part));
/** `base/a/b/…` with each part URL-encoded. */
const under = (base: string, ...parts: (string | number)[]) => [base, ...parts.map(seg)].join('/');
/** `path?name=value&…` (undefined values left out); the path alone when none is left. */
function withQuery(path: string, query: Record<string, string | number | boolean | undefined>): string {
  const pairs = Object.entries(query).filter(([, value]) => value !== undefined);
  const text = pairs.map(([name, value]) => `${seg(name)}=${seg(String(value))}`).join('&');
  return text ? `${path}?${text}` : path;
}

/** Accounts, sign-in and automation tokens (both roles). */
export const accountPaths = {
  login: `${API_ROOTS.session}/login`,
  me: `${API_ROOTS.session}/me`,
  changePassword: `${API_ROOTS.session}/change-password`,
  logout: `${API_ROOTS.session}/logout`,
  logoutAll: `${API_ROOTS.session}/logout-all`,
  users: API_ROOTS.users,
  user: (id: string) => under(API_ROOTS.users, id),
  automationTokens: API_ROOTS.automationTokens,
  automationToken: (id: string) => under(API_ROOTS.automationTokens, id),
};

/** Notifications, hooks and private CA certificates (both roles). */
export const integrationPaths = {
  ntfy: API_ROOTS.ntfy,
  ntfyTest: `${API_ROOTS.ntfy}/test`,
  hooks: API_ROOTS.hooks,
  hookFiles: `${API_ROOTS.hooks}/files`,
  hookFile: (filename: string) => under(`${API_ROOTS.hooks}/files`, filename),
  certificates: API_ROOTS.certificates,
  certificateFiles: `${API_ROOTS.certificates}/files`,
  certificateFile: (filename: string) => under(`${API_ROOTS.certificates}/files`, filename),
};

function snapshotPath(job: JobKey, filename: string): string {
  return under(API_ROOTS.snapshots, job.scoutId, job.instanceId, job.jobName, filename);
}

/** The Station's `/api`. */
export const stationPaths = {
  /** `GET`: the whole overview, or one `section` of it. */
  overview: (section?: 'settings' | 'storage' | 'snapshots') => withQuery(API_ROOTS.overview, { section }),
  /** `GET`: one page of jobs with their health (jobs.ts's JobsQuery: limit, cursor, filters). */
  jobs: (query: Record<string, string | number | undefined> = {}) => withQuery(API_ROOTS.jobs, query),
  /** `GET`: one job's snapshots, on demand. */
  jobSnapshots: (job: JobKey) =>
    `${under(API_ROOTS.jobs, job.scoutId, job.instanceId, job.jobName)}/snapshots`,
  /** `GET`: every instance (the restore dialog's targets); `DELETE` of one: `instance`. */
  instances: API_ROOTS.instances,
  settings: API_ROOTS.settings,
  retentionPreview: (query: Record<string, string | number | undefined>) =>
    withQuery(`${API_ROOTS.retention}/preview`, query),
  retentionJobs: `${API_ROOTS.retention}/jobs`,
  retentionJob: (job: JobKey) =>
    under(`${API_ROOTS.retention}/jobs`, job.scoutId, job.instanceId, job.jobName),
  uploadsPause: `${API_ROOTS.stationUploads}/pause`,
  uploadsResume: `${API_ROOTS.stationUploads}/resume`,
  /** `GET` downloads, `DELETE` deletes. */
  snapshot: snapshotPath,
  snapshotProtect: (job: JobKey, filename: string) => `${snapshotPath(job, filename)}/protect`,
  snapshotRestore: (job: JobKey, filename: string) => `${snapshotPath(job, filename)}/restore`,
  instance: (scoutId: string, instanceId: string, cleanupMissing = false) =>
    withQuery(under(API_ROOTS.instances, scoutId, instanceId), {
      cleanup_missing: cleanupMissing ? true : undefined,
    }),
  restoreRequests: API_ROOTS.restoreRequests,
  verify: API_ROOTS.verify,
  stationTokens: API_ROOTS.stationTokens,
  mintStationToken: `${API_ROOTS.stationTokens}/mint`,
  stationToken: (tokenHash: string) => under(API_ROOTS.stationTokens, tokenHash),
  stationTokensOfInstance: (scoutId: string, instanceId: string) =>
    under(`${API_ROOTS.stationTokens}/instances`, scoutId, instanceId),
  replication: API_ROOTS.replication,
  replicationRun: `${API_ROOTS.replication}/run`,
  replicationPulls: `${API_ROOTS.replication}/pulls`,
  replicationSource: `${API_ROOTS.replication}/source`,
  replicationSourceSnapshot: (job: JobKey, filename: string) =>
    under(`${API_ROOTS.replication}/source/snapshots`, job.scoutId, job.instanceId, job.jobName, filename),
};

const byPath = (path: string, relativePath: string) => withQuery(path, { relative_path: relativePath });

/** The Scout's `/api`. */
export const scoutPaths = {
  status: API_ROOTS.status,
  settings: API_ROOTS.settings,
  stationCheck: '/api/station/check',
  runNow: '/api/run-now',
  cancelOperation: '/api/cancel-operation',
  uploadsPause: `${API_ROOTS.scoutUploads}/pause`,
  uploadsResume: `${API_ROOTS.scoutUploads}/resume`,
  directories: API_ROOTS.directories,
  children: (relativePath: string) => byPath(`${API_ROOTS.directories}/children`, relativePath),
  browse: (relativePath: string) => byPath(`${API_ROOTS.directories}/browse`, relativePath),
  size: (relativePath: string) => byPath(`${API_ROOTS.directories}/size`, relativePath),
  saveJob: `${API_ROOTS.directories}/save-job`,
  deleteJob: `${API_ROOTS.directories}/delete-job`,
  exclude: `${API_ROOTS.directories}/exclude`,
  jobRunNow: `${API_ROOTS.directories}/run-now`,
  forceSend: `${API_ROOTS.directories}/force-send`,
  clearStaged: `${API_ROOTS.directories}/clear-staged`,
  encryptionKey: API_ROOTS.encryptionKey,
  confirmKey: `${API_ROOTS.encryptionKey}/confirm`,
  rotateKey: `${API_ROOTS.encryptionKey}/rotate`,
  recoverySnapshots: (relativePath: string) => byPath(`${API_ROOTS.recovery}/snapshots`, relativePath),
  preview: `${API_ROOTS.recovery}/preview`,
  restore: `${API_ROOTS.recovery}/restore`,
  runDrills: `${API_ROOTS.drills}/run`,
  restoreRequests: API_ROOTS.restoreRequests,
  restoreDecision: `${API_ROOTS.restoreRequests}/decision`,
};
