// The systemd units pass `systemd-analyze verify` (with ExecStart pointed at a binary that
// exists here), and keep the settings the operator's guide promises.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

// Issue #23 item 11: the Scout runs as root, so its unit keeps only what a backup agent needs
// (docs/operators-guide.md, "The Scout's systemd unit", lists each setting with its reason).
const SCOUT_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_DAC_READ_SEARCH',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_SETFCAP',
  'CAP_SETGID',
  'CAP_SETUID',
];
const SCOUT_HARDENING = [
  'NoNewPrivileges=yes',
  'ProtectSystem=strict',
  'PrivateTmp=yes',
  'PrivateDevices=yes',
  'SystemCallFilter=@system-service @pkey',
  'SystemCallErrorNumber=EPERM',
  'SystemCallArchitectures=native',
  'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
  'ProtectKernelTunables=yes',
  'ProtectKernelModules=yes',
  'ProtectKernelLogs=yes',
  'ProtectControlGroups=yes',
  'ProtectClock=yes',
  'ProtectHostname=yes',
  'LockPersonality=yes',
  'RestrictNamespaces=yes',
  'RestrictRealtime=yes',
  'UMask=0077',
];

test('the Scout unit keeps only the capabilities a root backup agent needs, each hardening setting documented', () => {
  const text = readFileSync(join(ROOT, 'deploy/systemd/backupd-scout.service'), 'utf8');
  const guide = readFileSync(join(ROOT, 'docs/operators-guide.md'), 'utf8');
  const caps =
    text
      .match(/^CapabilityBoundingSet=(.*)$/m)?.[1]
      ?.trim()
      .split(/\s+/) ?? [];
  assert.deepEqual([...caps].sort(), SCOUT_CAPABILITIES);
  for (const cap of caps) assert.ok(guide.includes(`\`${cap}\``), `the guide gives the reason for ${cap}`);
  for (const line of SCOUT_HARDENING) {
    assert.match(text, new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    const key = line.slice(0, line.indexOf('='));
    assert.ok(guide.includes(`\`${key}`), `the guide gives the reason for ${key}`);
  }
  // A restore recreates setuid/setgid files (RestrictSUIDSGID would refuse the chmod), and V8
  // writes machine code at run time (MemoryDenyWriteExecute would kill it).
  assert.doesNotMatch(text, /^RestrictSUIDSGID=/m);
  assert.doesNotMatch(text, /^MemoryDenyWriteExecute=/m);
});

test('systemd-analyze security rates the Scout unit OK (exposure at most 4.0; 7.5 before)', { skip }, () => {
  const text = readFileSync(join(ROOT, 'deploy/systemd/backupd-scout.service'), 'utf8');
  const unit = join(work, 'security', 'backupd-scout.service');
  mkdirSync(join(work, 'security'), { recursive: true });
  writeFileSync(unit, text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
  const result = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', unit], {
    encoding: 'utf8',
  });
  const exposure = Number(/Overall exposure level for \S+: (\d+\.\d+)/.exec(result.stdout)?.[1]);
  assert.ok(Number.isFinite(exposure), `${result.stdout}\n${result.stderr}`);
  assert.ok(exposure <= 4.0, `exposure ${exposure}`);
});
