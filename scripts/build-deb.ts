/**
 * Builds the Debian package of one single executable with dpkg-deb (no network, no debhelper):
 * /usr/bin/backupd, the systemd units (ExecStart pointed at /usr/bin), the example environment
 * files as conffiles under /etc/backupd (mode 0600: they take secrets), the README and the
 * operator's guide, and the maintainer scripts from deploy/debian.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  createReadStream,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

const run = promisify(execFile);

/** Debian's names for the CPUs backupd ships for. */
export const DEBIAN_ARCH = { x64: 'amd64', arm64: 'arm64' } as const;
export type DebianArch = (typeof DEBIAN_ARCH)[keyof typeof DEBIAN_ARCH];

const MAINTAINER = process.env.DEB_MAINTAINER ?? 'backupd maintainers <maintainers@backupd.example>';
const UNITS = ['backupd-station.service', 'backupd-scout.service'];
const ENV_FILES = { 'station.env.example': 'station.env', 'scout.env.example': 'scout.env' };
const MAINTAINER_SCRIPTS = ['postinst', 'prerm', 'postrm'];

export interface DebInputs {
  root: string;
  dist: string;
  arch: DebianArch;
  executable: string;
  /** package.json's version. */
  version: string;
  commit: string;
  /** RFC 2822 date of the build commit, for the changelog. */
  date: string;
}

/** A Debian version for package.json's: `-` (a Debian revision) becomes `~` (sorts before the release). */
export const debianVersion = (version: string): string => version.replaceAll('-', '~');

function place(tree: string, path: string, mode: number, contents: string | Buffer): void {
  const file = join(tree, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, contents);
  chmodSync(file, mode);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

async function md5(file: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  return hash.digest('hex');
}

function unitFor(root: string, name: string): string {
  const text = readFileSync(join(root, 'deploy/systemd', name), 'utf8');
  const packaged = text.replace(/^ExecStart=\/usr\/local\/bin\/backupd /m, 'ExecStart=/usr/bin/backupd ');
  if (packaged === text)
    throw new Error(`deploy/systemd/${name}: no ExecStart=/usr/local/bin/backupd to point at /usr/bin`);
  return packaged;
}

function control(inputs: DebInputs, installedKiB: number): string {
  return `Package: backupd
Version: ${debianVersion(inputs.version)}
Architecture: ${inputs.arch}
Maintainer: ${MAINTAINER}
Installed-Size: ${installedKiB}
Depends: libc6 (>= 2.28), libgcc-s1 | libgcc1, libstdc++6 (>= 5)
Recommends: attr, acl
Suggests: age, zstd
Section: admin
Priority: optional
Description: self-hosted, end-to-end encrypted backups (Station and Scout)
 backupd is one program with two roles. A Station keeps encrypted snapshots
 (on an embedded PostgreSQL or an external one) and has a web dashboard; a
 Scout on every host packs the folders marked for backup (tar, zstd, age),
 uploads them to the Station and restores them.
 .
 Nothing is enabled or started on installation: enable backupd-station on
 the machine that keeps the backups and backupd-scout on each host, after
 editing /etc/backupd/station.env or /etc/backupd/scout.env.
`;
}

/** Writes dist/backupd_<version>_<arch>.deb; returns its path. */
export async function buildDebianPackage(inputs: DebInputs): Promise<string> {
  const { root, dist, arch, version } = inputs;
  const tree = join(dist, 'deb', arch);
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(join(tree, 'usr/bin'), { recursive: true });
  const bin = join(tree, 'usr/bin/backupd');
  try {
    linkSync(inputs.executable, bin); // 140 MiB: no copy when dist/ is one file system
  } catch {
    copyFileSync(inputs.executable, bin);
  }
  chmodSync(bin, 0o755);
  for (const name of UNITS) place(tree, `usr/lib/systemd/system/${name}`, 0o644, unitFor(root, name));
  for (const [example, name] of Object.entries(ENV_FILES)) {
    place(tree, `etc/backupd/${name}`, 0o600, readFileSync(join(root, 'deploy/systemd', example)));
  }
  const doc = 'usr/share/doc/backupd';
  place(tree, `${doc}/README.md`, 0o644, readFileSync(join(root, 'README.md')));
  place(tree, `${doc}/operators-guide.md`, 0o644, readFileSync(join(root, 'docs/operators-guide.md')));
  place(tree, `${doc}/copyright`, 0o644, readFileSync(join(root, 'deploy/debian/copyright')));
  const changelog = `backupd (${debianVersion(version)}) unstable; urgency=medium\n\n  * Built from commit ${inputs.commit}.\n\n -- ${MAINTAINER}  ${inputs.date}\n`;
  place(tree, `${doc}/changelog.gz`, 0o644, gzipSync(changelog, { level: 9 }));
  const overrides = readFileSync(join(root, 'deploy/debian/lintian-overrides'));
  place(tree, 'usr/share/lintian/overrides/backupd', 0o644, overrides);

  for (const entry of readdirSync(tree, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory()) chmodSync(join(entry.parentPath, entry.name), 0o755);
  }
  const payload = filesUnder(tree);
  const installedKiB = payload.reduce((sum, file) => sum + Math.ceil(statSync(file).size / 1024), 0);
  const sums = await Promise.all(
    payload.map(async (file) => `${await md5(file)}  ${relative(tree, file)}\n`),
  );
  mkdirSync(join(tree, 'DEBIAN'), { mode: 0o755 });
  chmodSync(join(tree, 'DEBIAN'), 0o755);
  place(tree, 'DEBIAN/control', 0o644, control(inputs, installedKiB));
  place(tree, 'DEBIAN/md5sums', 0o644, sums.join(''));
  place(
    tree,
    'DEBIAN/conffiles',
    0o644,
    Object.values(ENV_FILES)
      .map((name) => `/etc/backupd/${name}\n`)
      .join(''),
  );
  for (const script of MAINTAINER_SCRIPTS) {
    place(tree, `DEBIAN/${script}`, 0o755, readFileSync(join(root, 'deploy/debian', script)));
  }

  const output = join(dist, `backupd_${debianVersion(version)}_${arch}.deb`);
  rmSync(output, { force: true });
  // gzip: every dpkg reads it, and it is 5× faster than xz on a 140 MiB executable. Level 1:
  // 5.4 s instead of 22.8 s for the executable, for 11 % more bytes (54.6 MB against 49.0 MB).
  await run('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z1', '--build', tree, output]);
  rmSync(tree, { recursive: true, force: true });
  return output;
}
