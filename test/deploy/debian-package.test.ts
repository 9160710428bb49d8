// The Debian packages `npm run build` writes (dist/backupd_<version>_{amd64,arm64}.deb): their
// control data and contents (dpkg-deb -I / -c), maintainer scripts that never enable or start
// a service, the amd64 package extracted (dpkg -x) to a tree whose backupd runs and whose
// units pass systemd-analyze verify, and lintian finding no errors in either.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import { ROOT } from '../helpers/server.ts';

const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const PACKAGES = {
  amd64: {
    deb: join(ROOT, 'dist', `backupd_${version}_amd64.deb`),
    executable: 'backupd',
    platform: 'linux-x64',
  },
  arm64: {
    deb: join(ROOT, 'dist', `backupd_${version}_arm64.deb`),
    executable: 'backupd-linux-arm64',
    platform: 'linux-arm64',
  },
};
const UNITS = ['backupd-station.service', 'backupd-scout.service'];
const skip = skipUnlessPrograms(['dpkg-deb', 'systemd-analyze', 'lintian']);

function dpkgDeb(args: string[]): string {
  const result = spawnSync('dpkg-deb', args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

/** `dpkg-deb -c` as path → `mode owner/group size` (paths without the leading `.`). */
function contents(deb: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of dpkgDeb(['-c', deb]).trim().split('\n')) {
    const [mode, owner, size, , , path] = line.split(/\s+/);
    entries.set(String(path).replace(/^\./, ''), `${mode} ${owner} ${size}`);
  }
  return entries;
}

describe('the Debian packages', { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), 'backupd-deb-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  for (const [arch, { deb, executable }] of Object.entries(PACKAGES)) {
    test(`${arch}: control data, conffiles and contents`, () => {
      const control = dpkgDeb(['-f', deb]);
      assert.match(control, /^Package: backupd$/m);
      assert.match(control, new RegExp(`^Version: ${version.replaceAll('.', '\\.')}$`, 'm'));
      assert.match(control, new RegExp(`^Architecture: ${arch}$`, 'm'));
      assert.match(control, /^Depends: libc6 \(>= 2\.28\)/m);
      assert.match(control, /^Maintainer: .+ <[^@\s]+@[^>\s]+>$/m);
      assert.deepEqual(dpkgDeb(['-I', deb, 'conffiles']).trim().split('\n'), [
        '/etc/backupd/station.env',
        '/etc/backupd/scout.env',
      ]);

      const files = contents(deb);
      const size = statSync(join(ROOT, 'dist', executable)).size;
      assert.equal(files.get('/usr/bin/backupd'), `-rwxr-xr-x root/root ${size}`, 'the executable, as built');
      for (const unit of UNITS)
        assert.match(String(files.get(`/usr/lib/systemd/system/${unit}`)), /^-rw-r--r-- root\/root /);
      for (const env of ['station.env', 'scout.env']) {
        assert.match(
          String(files.get(`/etc/backupd/${env}`)),
          /^-rw------- root\/root /,
          `${env}: only root reads it`,
        );
      }
      for (const doc of ['README.md', 'operators-guide.md', 'copyright', 'changelog.gz']) {
        assert.ok(files.has(`/usr/share/doc/backupd/${doc}`), `/usr/share/doc/backupd/${doc}`);
      }
    });

    test(`${arch}: the maintainer scripts reload systemd and never enable or start a service`, () => {
      const postinst = dpkgDeb(['-I', deb, 'postinst']);
      assert.match(postinst, /^\s*systemctl daemon-reload/m);
      for (const script of ['postinst', 'prerm', 'postrm']) {
        const text = dpkgDeb(['-I', deb, script]);
        const check = spawnSync('sh', ['-n'], { input: text, encoding: 'utf8' });
        assert.equal(check.status, 0, `${script}: ${check.stderr}`);
        const code = text.replace(/#.*$/gm, '');
        assert.doesNotMatch(
          code,
          /systemctl\s+(?:\S+\s+)*(?:enable|start|restart|reload-or-restart)\b/,
          script,
        );
        assert.doesNotMatch(code, /deb-systemd-(?:helper|invoke)\s+(?:enable|start|restart)/, script);
      }
    });
  }

  test('amd64 extracted: usr/bin/backupd --version runs and the units pass systemd-analyze verify', () => {
    const tree = join(work, 'amd64');
    const extract = spawnSync('dpkg', ['-x', PACKAGES.amd64.deb, tree], { encoding: 'utf8' });
    assert.equal(extract.status, 0, extract.stderr);

    const version_ = spawnSync(join(tree, 'usr/bin/backupd'), ['--version'], {
      encoding: 'utf8',
      env: { PATH: '' },
    });
    assert.equal(version_.status, 0, version_.stderr);
    assert.match(
      version_.stdout,
      new RegExp(`^backupd ${version.replaceAll('.', '\\.')} \\([0-9a-f]{7,}\\) linux-x64$`, 'm'),
    );

    // Verified as installed, but with ExecStart at the extracted executable (systemd-analyze
    // checks that it exists, and /usr/bin/backupd is not installed here).
    mkdirSync(join(work, 'units'));
    for (const unit of UNITS) {
      const text = readFileSync(join(tree, 'usr/lib/systemd/system', unit), 'utf8');
      assert.match(text, /^ExecStart=\/usr\/bin\/backupd /m);
      const copy = join(work, 'units', unit);
      writeFileSync(
        copy,
        text.replace(/^ExecStart=\/usr\/bin\/backupd /m, `ExecStart=${tree}/usr/bin/backupd `),
      );
      const verify = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
      assert.equal(verify.status, 0, verify.stderr);
      assert.equal(verify.stderr.trim(), '', `${unit}: no warnings`);
    }
  });

  test('lintian finds no errors in either package', { timeout: 600_000 }, async () => {
    const debs = Object.values(PACKAGES).map((p) => p.deb);
    // binaries/spelling reads every string of the ~100 MiB executable (17 of lintian's 32 s per
    // package here) and can only say spelling-error-in-binary, an info tag: it cannot fail this.
    const args = ['--fail-on', 'error', '--jobs', '2', '--dont-check-part', 'binaries/spelling', ...debs];
    const { stdout, stderr } = await run('lintian', args, {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout: string; stderr: string }) => {
      assert.fail(`lintian reports errors:\n${error.stdout}${error.stderr}`);
    });
    assert.doesNotMatch(stdout, /^E: /m, stderr);
  });
});
