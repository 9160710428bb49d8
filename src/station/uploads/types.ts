import type { Clock } from '../../core/clock.ts';
import { DAY_MS } from '../../core/clock.ts';
import type { UploadAcceptance } from '../../core/settings/upload-acceptance.ts';
import type { InitiateRequest } from '../../shared/protocol/uploads.ts';
import type { StationDb } from '../db/open.ts';
import type { uploadSessions } from '../db/station-tables.ts';
import type { JobKey } from '../job-key.ts';
import type { JobRetention } from '../retention/job-overrides.ts';
import type { UploadRate } from '../retention/upload-rate.ts';
import type { SnapshotIndex } from '../services/snapshot-index.ts';
import type { StationSettingsService } from '../services/station-settings.ts';
import type { StationTokens } from '../services/station-tokens.ts';
import type { SnapshotStore } from '../storage/storage.ts';
import type { UploadLock } from './upload-lock.ts';

/** An upload that received no bytes this long is abandoned: its staged bytes are removed. */
export const ABANDONED_AFTER_MS = DAY_MS;
/**
 * A session's declared size is held for it only while bytes arrive: one that received nothing
 * this long stops holding space (it can still resume until it is abandoned).
 */
export const RESERVATION_IDLE_MS = 60 * 60 * 1000;
/** Finished sessions are kept this long so a retried initiation still finds its result. */
export const STORED_KEPT_MS = 7 * DAY_MS;

/** The initiation body as the route validated it (src/shared/protocol/uploads.ts). */
export type InitiateBody = InitiateRequest;

export type SessionRow = typeof uploadSessions.$inferSelect;

export type UploadFacts = Record<string, string | number>;

/** What finalize tells the rest of the Station: hooks run around it, notifications follow it. */
export interface UploadEvents {
  beforeStore(facts: UploadFacts): Promise<void>;
  stored(facts: UploadFacts): void;
  failed(facts: UploadFacts, reason: string): void;
}

/** What the upload services work with; `clock` defaults to the Station's clock. */
export interface UploadDeps {
  db: StationDb;
  store: SnapshotStore;
  index: SnapshotIndex;
  tokens: StationTokens;
  settings: StationSettingsService;
  acceptance: UploadAcceptance;
  maxUploadBytes: number;
  clock: Clock;
  /** Serialises the chunks and finalize of one upload (upload-lock.ts). */
  lock: UploadLock;
  events?: UploadEvents | undefined;
  /** Per-job retention overrides; without them every job follows `settings`. */
  jobRetention?: JobRetention | undefined;
  /** The per-job hourly upload limit (retention_max_uploads_per_hour); none = no limit. */
  uploadRate?: UploadRate | undefined;
}

export type { JobKey } from '../job-key.ts';

export const jobKeyOf = (row: SessionRow): JobKey => ({
  scoutId: row.scoutId,
  instanceId: row.scoutInstanceId,
  jobName: row.jobName,
});
