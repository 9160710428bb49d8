// A Station runs with glibc's malloc tunables (src/station/malloc-tuning.ts): started without
// them it replaces itself, keeping its process id, by a process that has them; the systemd
// unit sets the same value for the single executable.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { STATION_MALLOC_TUNABLES } from '../../src/station/malloc-tuning.ts';
import { ROOT, startServer } from '../helpers/server.ts';

test('a Station started without GLIBC_TUNABLES runs with the Station tunables, same pid', async () => {
  const station = await startServer('station', { env: { LOG_LEVEL: 'warn' } });
  try {
    // glibc cuts GLIBC_TUNABLES at its colons in place while it reads it; put them back.
    const environ = readFileSync(`/proc/${station.pid}/environ`, 'utf8').replaceAll('\0', ':');
    // An operator's (or this runner's) own GLIBC_TUNABLES is kept as it is.
    const tunables = process.env.GLIBC_TUNABLES ?? STATION_MALLOC_TUNABLES;
    assert.ok(environ.includes(`:GLIBC_TUNABLES=${tunables}:`), 'the Station runs with the tunables');
    assert.equal((await fetch(`${station.url}/health`)).status, 200);
  } finally {
    await station.dispose();
  }
});

test('the systemd unit sets the same tunables', () => {
  const unit = readFileSync(join(ROOT, 'deploy/systemd/backupd-station.service'), 'utf8');
  assert.match(unit, new RegExp(`^Environment=GLIBC_TUNABLES=${STATION_MALLOC_TUNABLES}$`, 'm'));
});
