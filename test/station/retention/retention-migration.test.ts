// Migration 0007 and the retention defaults (issue 25: "an existing Station keeps what it
// has"): a database migrated from empty (a new Station) gets the calendar defaults; one that
// already had rows before 0007 keeps keep_last 30 (or RETENTION_KEEP_LAST, or what its admin
// saved) with the calendar rules off. Real migrations on an in-process PGlite.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import * as tables from '../../../src/core/db/core-tables.pg.ts';
import { splitStatements } from '../../../src/core/db/migrate.ts';
import { loadMigrationFiles } from '../../../src/core/db/migration-files.ts';
import { createSettingsStore } from '../../../src/core/settings/settings-store.ts';
import { NEW_STATION_DEFAULTS } from '../../../src/station/retention/fields.ts';
import { createStationSettings } from '../../../src/station/services/station-settings.ts';
import { CALENDAR_OFF } from '../../helpers/retention.ts';

const files = loadMigrationFiles('station');
const before0007 = files.filter((f) => f.name < '0007');
const from0007 = files.filter((f) => f.name >= '0007');
const open: PGlite[] = [];
after(async () => {
  for (const pg of open) await pg.close();
});

/** A database migrated up to 0006, with `rows` (SQL) run, then migrated to the end. */
async function station(rows: string[], env: Record<string, string> = {}) {
  const pg = await PGlite.create();
  open.push(pg);
  const apply = async (list: typeof files) => {
    for (const file of list) for (const statement of splitStatements(file.sql)) await pg.exec(statement);
  };
  await apply(before0007);
  for (const row of rows) await pg.exec(row);
  await apply(from0007);
  const db = drizzle(pg);
  return createStationSettings(createSettingsStore(db as never, tables), env).read();
}

test('a new Station: last 3, daily 7, weekly 5, monthly 12, yearly 3', async () => {
  const got = await station([]);
  assert.deepEqual(got, NEW_STATION_DEFAULTS);
  // The numbers issue 25 names (the rule itself is src/station/retention/fields.ts).
  const { retention_keep_last: last, retention_keep_daily: daily, retention_keep_weekly: weekly } = got;
  const { retention_keep_monthly: monthly, retention_keep_yearly: yearly } = got;
  assert.deepEqual([last, daily, weekly, monthly, yearly], [3, 7, 5, 12, 3]);
});

test('a Station that ran before (rows in its database): keep_last 30, calendar rules off', async () => {
  const ran = [`INSERT INTO settings (key, value) VALUES ('snapshot_index_version', '4')`];
  assert.deepEqual(await station(ran), {
    retention_keep_last: 30,
    ...CALENDAR_OFF,
    retention_keep_within_days: 0,
    retention_max_uploads_per_hour: 12,
  });
  assert.equal((await station(ran, { RETENTION_KEEP_LAST: '9' })).retention_keep_last, 9);
});

test('what an admin saved before stays; the rest as before calendar rules', async () => {
  const saved = [
    `INSERT INTO settings (key, value) VALUES ('station', '{"retention_keep_last":7,"retention_keep_within_days":14}')`,
  ];
  const settings = await station(saved);
  assert.equal(settings.retention_keep_last, 7);
  assert.equal(settings.retention_keep_within_days, 14);
  assert.deepEqual(
    { ...settings, retention_keep_last: 0, retention_keep_within_days: 0 },
    {
      retention_keep_last: 0,
      ...CALENDAR_OFF,
      retention_keep_within_days: 0,
      retention_max_uploads_per_hour: 12,
    },
  );
});
