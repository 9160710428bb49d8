// A Station and a Scout run with glibc's malloc tunables (src/core/malloc-tuning.ts): started
// without them each replaces itself, keeping its process id, by a process that has them; the
// systemd units set the same value for the single executable.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { MALLOC_TUNABLES } from '../../src/core/malloc-tuning.ts';
import { ROOT, startServer } from '../helpers/server.ts';

for (const role of ['station', 'scout'] as const) {
  test(`a ${role} started without GLIBC_TUNABLES runs with the tunables, same pid`, async () => {
    const station = await startServer(role, { env: { LOG_LEVEL: 'warn' } });
    try {
      // glibc cuts GLIBC_TUNABLES at its colons in place while it reads it; put them back.
      const environ = readFileSync(`/proc/${station.pid}/environ`, 'utf8').replaceAll('\0', ':');
      // An operator's (or this runner's) own GLIBC_TUNABLES is kept as it is.
      const tunables = process.env.GLIBC_TUNABLES ?? MALLOC_TUNABLES;
      assert.ok(environ.includes(`:GLIBC_TUNABLES=${tunables}:`), `the ${role} runs with the tunables`);
      assert.equal((await fetch(`${station.url}/health`)).status, 200);
    } finally {
      await station.dispose();
    }
  });

  test(`the ${role}'s systemd unit sets the same tunables`, () => {
    const unit = readFileSync(join(ROOT, `deploy/systemd/backupd-${role}.service`), 'utf8');
    assert.match(unit, new RegExp(`^Environment=GLIBC_TUNABLES=${MALLOC_TUNABLES}$`, 'm'));
  });
}
