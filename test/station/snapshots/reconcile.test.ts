// The start-up reconcile (src/station/services/reconcile.ts) in process, on PGlite and on a
// PostgreSQL server: it compares the store with the index a few whole jobs at a time (batches
// made tiny here, so every case crosses batch boundaries), indexes what the index lacks, marks
// missing what the store lacks (a file, or a whole job whose folder is gone) and unmarks what
// came back; a second run finds nothing to do.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fixedClock } from '../../../src/core/clock.ts';
import { loadStationConfig } from '../../../src/core/config.ts';
import { createCore } from '../../../src/core/core.ts';
import { openStationDatabase } from '../../../src/station/db/open.ts';
import { reconcile } from '../../../src/station/services/reconcile.ts';
import type { NewSnapshotRow } from '../../../src/station/services/snapshot-index.ts';
import { createStationServices } from '../../../src/station/services.ts';
import { sha256 } from '../../helpers/hashes.ts';
import { seedPgliteCluster } from '../../helpers/pglite-template.ts';
import { createDatabase, type PostgresServer, startPostgres } from '../../helpers/postgres.ts';
import { postgresSkip } from '../../helpers/postgres-runner.ts';

const ROOT = join(import.meta.dirname, '../../..');
const NOW = Date.UTC(2026, 10, 20, 12);
const INSTANCES = ['inst0000000000000001', 'inst0000000000000002'];

/** The n-th snapshot name of `job` (a valid `<job>__<time>__<fp8>.tar.zst`). */
const nameOf = (job: string, n: number) =>
  `${job}__2026-11-${String(10 + n).padStart(2, '0')}T08-00-00Z__0badf00d.tar.zst`;

/**
 * One job: `files` stored (their names' numbers), `rows` indexed, `missingRows` of those
 * indexed as missing already.
 */
interface JobCase {
  instance: string;
  job: string;
  files: number[];
  rows: number[];
  missingRows?: number[];
}

const CASES: JobCase[] = [
  // In step: nothing to do.
  { instance: INSTANCES[0] as string, job: 'alpha', files: [1, 2, 3], rows: [1, 2, 3] },
  // One file the index lacks.
  { instance: INSTANCES[0] as string, job: 'bravo', files: [1, 2], rows: [1] },
  // The whole job's folder gone: both rows missing.
  { instance: INSTANCES[0] as string, job: 'charlie', files: [], rows: [1, 2] },
  // Marked missing before, back now.
  { instance: INSTANCES[1] as string, job: 'delta', files: [1], rows: [1], missingRows: [1] },
  // One row whose file is gone, one already missing and still gone.
  { instance: INSTANCES[1] as string, job: 'echo', files: [1, 2], rows: [1, 2, 3, 4], missingRows: [4] },
  // Jobs whose names extend another's, so a string prefix never stands for a job.
  { instance: INSTANCES[1] as string, job: 'echo-2', files: [5], rows: [5] },
  { instance: INSTANCES[1] as string, job: 'echo-3', files: [], rows: [6] },
];

const bytesOf = (c: JobCase, n: number) => Buffer.from(`${c.instance}/${c.job}/${n}`);

function onDatabase(kind: 'pglite' | 'postgres') {
  describe(`start-up reconcile, job by job (${kind === 'pglite' ? 'PGlite' : 'PostgreSQL'})`, () => {
    const work = mkdtempSync(join(tmpdir(), 'backupd-reconcile-'));
    let server: PostgresServer | undefined;
    after(async () => {
      await server?.stop();
      rmSync(work, { recursive: true, force: true });
    });

    test('indexes what the index lacks, marks missing what the store lacks, a second run does nothing', async () => {
      const dataDir = join(work, 'data');
      let databaseUrl: string | undefined;
      if (kind === 'postgres') {
        server = await startPostgres();
        databaseUrl = await createDatabase(server.url, 'reconcile');
      } else seedPgliteCluster(ROOT, dataDir);
      const config = loadStationConfig({ dataDir }, databaseUrl ? { DATABASE_URL: databaseUrl } : {});
      const storage = await openStationDatabase(config);
      try {
        const station = createStationServices(config, createCore('station', storage), storage);
        await station.store.prepare();
        const root = join(dataDir, 'snapshots');
        const rows: NewSnapshotRow[] = [];
        for (const c of CASES) {
          const dir = join(root, 'scout-a', c.instance, c.job);
          if (c.files.length > 0) mkdirSync(dir, { recursive: true });
          for (const n of c.files) writeFileSync(join(dir, nameOf(c.job, n)), bytesOf(c, n));
          for (const n of c.rows)
            rows.push({
              scoutId: 'scout-a',
              scoutInstanceId: c.instance,
              jobName: c.job,
              filename: nameOf(c.job, n),
              sizeBytes: bytesOf(c, n).length,
              sha256: sha256(bytesOf(c, n)),
              fingerprint: '0badf00d',
              keyFingerprint: null,
              mtime: NOW,
              storedAt: NOW,
              takenAt: NOW - n * 1000,
              unusual: null,
              missing: c.missingRows?.includes(n) ?? false,
            });
        }
        await station.index.insertMany(rows);
        const run = () =>
          reconcile({
            index: station.index,
            store: station.store,
            uploads: station.uploads,
            clock: fixedClock(NOW),
            batch: { files: 2, jobs: 2 },
          });

        assert.deepEqual(await run(), { indexed: 1, missing: 4, restored: 1 });

        const jobs = CASES.map((c) => ({ scoutId: 'scout-a', instanceId: c.instance, jobName: c.job }));
        const states = await station.index.statesOf(jobs);
        const stateOf = (c: JobCase, n: number) =>
          states.find((s) => s.jobName === c.job && s.filename === nameOf(c.job, n));
        for (const c of CASES) {
          const known = new Set([...c.files, ...c.rows]);
          for (const n of known) {
            const state = stateOf(c, n);
            assert.ok(state, `${c.job} #${n} is indexed`);
            assert.equal(state.missing, !c.files.includes(n), `${c.job} #${n}: missing = not stored`);
          }
        }
        assert.equal(
          states.length,
          CASES.reduce((sum, c) => sum + new Set([...c.files, ...c.rows]).size, 0),
        );
        // The file found in the store is indexed with its own checksum and its name's time.
        const bravo = CASES[1] as JobCase;
        const found = await station.index.byName(
          { scoutId: 'scout-a', instanceId: bravo.instance, jobName: 'bravo' },
          nameOf('bravo', 2),
        );
        assert.equal(found?.sha256, sha256(bytesOf(bravo, 2)));
        assert.equal(found?.takenAt, Date.UTC(2026, 10, 12, 8));

        assert.deepEqual(
          await run(),
          { indexed: 0, missing: 0, restored: 0 },
          'a second run finds nothing to do',
        );
      } finally {
        await storage.close();
      }
    });
  });
}

onDatabase('pglite');
if (!postgresSkip('start-up reconcile (PostgreSQL)')) onDatabase('postgres');
