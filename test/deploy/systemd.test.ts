// The systemd units pass `systemd-analyze verify` (with ExecStart pointed at a binary that
// exists here), and keep the settings the operator's guide promises.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from '../helpers/server.ts';

const available = spawnSync('systemd-analyze', ['--version']).status === 0;
const skip = !available && process.env.CI !== 'true' ? 'systemd-analyze is not installed' : false;
const work = mkdtempSync(join(tmpdir(), 'backupd-units-'));
after(() => rmSync(work, { recursive: true, force: true }));

for (const name of ['backupd-station.service', 'backupd-scout.service']) {
  test(`${name} passes systemd-analyze verify`, { skip }, () => {
    const text = readFileSync(join(ROOT, 'deploy/systemd', name), 'utf8');
    assert.match(text, /^StateDirectory=/m);
    assert.match(text, /^Restart=on-failure$/m);
    assert.match(text, /^TimeoutStopSec=/m);
    assert.match(text, /^NoNewPrivileges=yes$/m);
    assert.match(text, /^ProtectSystem=strict$/m);
    assert.match(text, /^PrivateTmp=yes$/m);
    const unit = join(work, name);
    writeFileSync(unit, text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
    const result = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr.trim(), '', 'no warnings');
  });
}

test('the example environment files name only documented variables', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  for (const file of ['station.env.example', 'scout.env.example']) {
    const text = readFileSync(join(ROOT, 'deploy/systemd', file), 'utf8');
    for (const match of text.matchAll(/^#?\s*([A-Z_]+)=/gm)) {
      assert.ok(readme.includes(`\`${match[1]}\``), `${file}: ${match[1]} is documented in the README`);
    }
  }
});
