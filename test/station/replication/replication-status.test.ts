// GET /api/replication reads two things a run changes: the run's lease (running or not) and its
// saved outcome. A run that ends while they are read must never show as idle with the outcome
// of the run before it (seen as a flaky off-site copy e2e test). In-memory settings and lease:
// the run ends right after the status's first read, whichever that is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixedClock } from '../../../src/core/clock.ts';
import type { SettingsStore } from '../../../src/core/settings/settings-store.ts';
import type { StationDb } from '../../../src/station/db/open.ts';
import { createReplication, type LagEvents } from '../../../src/station/replication/replication.ts';
import type { Leases } from '../../../src/station/services/leases.ts';
import type { SnapshotIndex } from '../../../src/station/services/snapshot-index.ts';
import type { CopyIn } from '../../../src/station/uploads/index.ts';

const LAST_ERROR = 'the primary https://primary.example cannot be reached: ECONNREFUSED';

test("a run that ends while the status is read shows as running or with its own outcome, never idle with the last run's", async () => {
  const sections = new Map<string, Record<string, unknown>>([
    ['replication', { replication_source_url: 'https://primary.example', replication_token: 'token' }],
    ['replication_status', { last_started_at: 3_000, last_finished_at: 2_000, last_error: LAST_ERROR }],
  ]);
  let held = true;
  let reads = 0;
  /** Answers a read of the run's state, then (after the first such read) lets the run end. */
  async function thenMaybeEnd<T>(answer: T): Promise<T> {
    reads += 1;
    if (reads === 1) {
      // The run saves its outcome, then lets go of the lease (replicator.ts).
      sections.set('replication_status', {
        ...sections.get('replication_status'),
        last_finished_at: 4_000,
        last_success_at: 4_000,
        last_error: null,
      });
      held = false;
    }
    return answer;
  }
  const settingsStore = {
    read: async (section: string) => {
      const value = { ...sections.get(section) };
      return section === 'replication_status' ? thenMaybeEnd(value) : value;
    },
    write: async (section: string, value: Record<string, unknown>) => {
      sections.set(section, value);
    },
  } as unknown as SettingsStore;
  const leases = {
    freeIfDead: async () => {},
    holderOf: async () => thenMaybeEnd(held ? 'another-station' : null),
  } as unknown as Leases;
  const replication = createReplication({
    db: {} as StationDb,
    settingsStore,
    index: {} as SnapshotIndex,
    copies: {} as CopyIn,
    leases,
    clock: fixedClock(5_000),
    events: {} as LagEvents,
  });

  const view = await replication.status();
  assert.ok(reads >= 2, 'the status read both the lease and the outcome');
  assert.ok(
    view.state === 'running' || view.last_error === null,
    `shown ${view.state} with last_error ${view.last_error}`,
  );
});
