import { type Clock, clock as stationClock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { SettingsStore } from '../../core/settings/settings-store.ts';
import type { VerifyResult } from '../../shared/protocol/snapshots.ts';
import { snapshotPath } from '../storage/layout.ts';
import type { SnapshotStore } from '../storage/storage.ts';
import { sha256Stream } from './file-hash.ts';
import type { Leases } from './leases.ts';
import type { SnapshotIndex } from './snapshot-index.ts';

const log = logger.child({ mod: 'station/verify' });
const SECTION = 'verification';

const NEVER_RUN: VerifyResult = {
  status: 'never_run',
  started_at: null,
  finished_at: null,
  checked: 0,
  bytes: 0,
  failures: [],
};

/**
 * Re-hashes every stored snapshot (streamed through the store) against the index and looks
 * for snapshots the index lacks.
 */
export function createVerifier(deps: {
  index: SnapshotIndex;
  store: SnapshotStore;
  clock?: Clock;
  settings: SettingsStore;
  /** Several Stations on one database: one verification at a time among them. */
  leases?: Leases;
  onDone?: (result: VerifyResult) => void;
}) {
  const clock = deps.clock ?? stationClock;
  let running: Promise<VerifyResult> | null = null;
  let current: VerifyResult | null = null;

  async function verify(): Promise<VerifyResult> {
    const result: VerifyResult = {
      ...NEVER_RUN,
      status: 'running',
      started_at: clock.date().toISOString(),
      failures: [],
    };
    current = result;
    const rows = await deps.index.all();
    const known = new Set<string>();
    for (const row of rows) {
      const key = {
        scoutId: row.scoutId,
        instanceId: row.scoutInstanceId,
        jobName: row.jobName,
        filename: row.filename,
      };
      known.add(snapshotPath(key));
      const where = {
        scout_id: row.scoutId,
        scout_instance_id: row.scoutInstanceId,
        job_name: row.jobName,
        filename: row.filename,
      };
      const stats = await deps.store.stat(key);
      if (!stats) {
        result.failures.push({ ...where, problem: 'missing' });
        continue;
      }
      try {
        const sha = await sha256Stream(await deps.store.read(key));
        result.checked += 1;
        result.bytes += stats.sizeBytes;
        if (sha !== row.sha256) result.failures.push({ ...where, problem: 'checksum_mismatch' });
      } catch {
        result.failures.push({ ...where, problem: 'unreadable' });
      }
    }
    for await (const file of deps.store.list()) {
      if (!known.has(snapshotPath(file))) {
        result.failures.push({
          scout_id: file.scoutId,
          scout_instance_id: file.instanceId ?? '',
          job_name: file.jobName,
          filename: file.filename,
          problem: 'unindexed',
        });
      }
    }
    result.status = result.failures.length === 0 ? 'ok' : 'failed';
    result.finished_at = clock.date().toISOString();
    await deps.settings.write(SECTION, { ...result });
    log.info(
      { status: result.status, checked: result.checked, failures: result.failures.length },
      'verification done',
    );
    deps.onDone?.(result);
    return result;
  }

  /** What a Station answers while another one runs the verification (it holds the lease). */
  const RUNNING_ELSEWHERE: VerifyResult = { ...NEVER_RUN, status: 'running', failures: [] };

  /** Verifies under the `verify` lease; while another Station holds it, answers `running`. */
  async function exclusive(): Promise<VerifyResult> {
    if (!deps.leases) return verify();
    const outcome = await deps.leases.exclusive('verify', verify);
    return outcome.ran ? outcome.value : RUNNING_ELSEWHERE;
  }

  return {
    /** Runs a verification (or joins the one running) and waits for its result. */
    run(): Promise<VerifyResult> {
      running ??= exclusive().finally(() => {
        running = null;
        current = null;
      });
      return running;
    },
    async last(): Promise<VerifyResult> {
      if (current) return current;
      if (await deps.leases?.holderOf('verify')) return RUNNING_ELSEWHERE;
      const saved = await deps.settings.read(SECTION);
      return saved.status ? (saved as unknown as VerifyResult) : NEVER_RUN;
    },
  };
}

export type Verifier = ReturnType<typeof createVerifier>;
