// Station upload services in process, no server: a PGlite database seeded from the test
// template cluster, the disk store in a temp dir, and a clock the test moves.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fixedClock } from '../../../src/core/clock.ts';
import { loadStationConfig } from '../../../src/core/config.ts';
import { createCore } from '../../../src/core/core.ts';
import { openStationDatabase, type StationDatabase } from '../../../src/station/db/open.ts';
import type { StationTokenRow } from '../../../src/station/services/station-tokens.ts';
import type { StationServices } from '../../../src/station/services.ts';
import { createStationServices } from '../../../src/station/services.ts';
import { createDiskStore } from '../../../src/station/storage/disk-store.ts';
import { createUploads, type InitiateBody, type UploadFacts } from '../../../src/station/uploads/index.ts';
import type { UploadLock } from '../../../src/station/uploads/upload-lock.ts';
import { seedPgliteCluster } from '../../helpers/pglite-template.ts';
import { archiveMeta } from '../../helpers/uploads.ts';

const ROOT = join(import.meta.dirname, '../../..');

/** A body that yields `data` in socket-sized pieces. */
export const bodyOf = (data: Uint8Array, piece = 64 * 1024) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < data.length; at += piece) yield Buffer.from(data.subarray(at, at + piece));
    })(),
  );

/** A body that yields `data` and then fails, as a request whose client went away. */
export const brokenBodyOf = (data: Uint8Array) =>
  Readable.from(
    (async function* () {
      yield Buffer.from(data);
      throw new Error('client went away');
    })(),
  );

/** Initiation metadata for `data` (test/helpers/uploads.ts), with its size and checksum set. */
export const bodyFor = (data: Uint8Array, overrides: Partial<InitiateBody> = {}) =>
  archiveMeta(data, overrides) as InitiateBody & { archive_size_bytes: number; archive_sha256: string };

export interface Kit {
  dir: string;
  backupRoot: string;
  stagingDir: string;
  storage: StationDatabase;
  clock: ReturnType<typeof fixedClock>;
  events: { stored: UploadFacts[]; failed: string[] };
  index: StationServices['index'];
  settings: StationServices['settings'];
  token: StationTokenRow;
  /** A fresh set of services on the same database and folders (a Station restart). */
  uploads: ReturnType<typeof createUploads>;
  restart(): void;
  /** The services with another upload lock (the default is the database lease). */
  uploadsWith(lock: UploadLock): ReturnType<typeof createUploads>;
  close(): Promise<void>;
}

export async function openKit(): Promise<Kit> {
  const dir = mkdtempSync(join(tmpdir(), 'backupd-upload-services-'));
  const dataDir = join(dir, 'data');
  seedPgliteCluster(ROOT, dataDir);
  const backupRoot = join(dir, 'backups');
  const stagingDir = join(dir, 'staging');
  const config = loadStationConfig({ dataDir }, { BACKUP_ROOT: backupRoot, STAGING_DIR: stagingDir });
  const storage = await openStationDatabase(config);
  // The Station's own services (tokens, index, settings); the uploads are made below.
  const { tokens, index, settings, acceptance } = createStationServices(
    config,
    createCore('station', storage),
    storage,
  );
  const db = storage.stationDb;
  // A shared token, so that each test may use its own Scout instance.
  const minted = await tokens.mint({ ttl_days: 30, shared: true, max_registrations: 10_000 });
  const token = await tokens.authenticate(minted.credential);
  const clock = fixedClock(Date.now());
  const events = { stored: [] as UploadFacts[], failed: [] as string[] };
  const make = (lock?: UploadLock) => {
    const store = createDiskStore({ backupRoot, stagingDir });
    return createUploads({
      db,
      ...(lock ? { lock } : {}),
      store,
      index,
      tokens,
      settings,
      acceptance,
      maxUploadBytes: 1024 * 1024 * 1024,
      clock,
      events: {
        beforeStore: async () => {},
        stored: (facts) => events.stored.push(facts),
        failed: (_facts, reason) => events.failed.push(reason),
      },
    });
  };
  await createDiskStore({ backupRoot, stagingDir }).prepare();
  const kit: Kit = {
    dir,
    backupRoot,
    stagingDir,
    storage,
    clock,
    events,
    index,
    settings,
    token,
    uploads: make(),
    restart() {
      kit.uploads = make();
    },
    uploadsWith: make,
    async close() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return kit;
}
