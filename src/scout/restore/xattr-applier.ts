// Node has no xattr calls, so extended attributes and ACLs (pax SCHILY.xattr.* records) are set
// by the attr package's `setfattr --restore`, once per batch of files rather than per file.
// Each file is handed to it as an open descriptor (child fd 3, 4, …) and named
// /proc/self/fd/<n>, so the attributes land on the very file the restore wrote, whatever has
// happened to its path since. They are set after the content and the owner (a later write or
// chown would clear security.capability); setting them changes a file's ctime, not its mtime.
import { spawnSync } from 'node:child_process';
import { closeSync, fchmodSync } from 'node:fs';
import { reasonOf } from './entry-problems.ts';
import type { Xattr } from './tar-reader.ts';

/** Files per setfattr run (each is an open descriptor until then). */
const BATCH = 128;
const FIRST_FD = 3;

/** user.* always; security.*, trusted.* and POSIX ACLs only as root, as `tar --xattrs` does. */
export function restorableXattrs(xattrs: Xattr[], asRoot: boolean): Xattr[] {
  return xattrs.filter(({ name }) => {
    const text = name.toString('latin1');
    if (text.startsWith('user.')) return true;
    if (!asRoot) return false;
    return (
      text.startsWith('security.') ||
      text.startsWith('trusted.') ||
      text === 'system.posix_acl_access' ||
      text === 'system.posix_acl_default'
    );
  });
}

/** An attribute name as setfattr's input reads it: odd bytes, `\` and `=` as `\ooo`. */
function quoted(name: Buffer): string {
  let out = '';
  for (const byte of name) {
    out +=
      byte <= 0x20 || byte >= 0x7f || byte === 0x5c || byte === 0x3d
        ? `\\${byte.toString(8).padStart(3, '0')}`
        : String.fromCharCode(byte);
  }
  return out;
}

const line = ({ name, value }: Xattr) =>
  `${quoted(name)}=${value.length === 0 ? '""' : `0s${value.toString('base64')}`}\n`;

interface Pending {
  fd: number;
  /** The entry as shown in problems. */
  path: string;
  xattrs: Xattr[];
  /** A mode to set after the attributes (a read-only file takes user.* attributes only before). */
  mode: number | null;
}

/** Collects files with attributes (taking over their descriptors) and sets them in batches. */
export function createXattrApplier(problem: (path: string, message: string) => void) {
  let pending: Pending[] = [];

  function run(batch: Pending[]): void {
    const input = batch
      .map((p, i) => `# file: /proc/self/fd/${FIRST_FD + i}\n${p.xattrs.map(line).join('')}\n`)
      .join('');
    const result = spawnSync('setfattr', ['--restore=-'], {
      input,
      stdio: ['pipe', 'ignore', 'pipe', ...batch.map((p) => p.fd)],
    });
    if (result.error) {
      const missing = (result.error as NodeJS.ErrnoException).code === 'ENOENT';
      for (const p of batch) {
        problem(
          p.path,
          missing
            ? 'extended attributes and ACLs not restored: setfattr is missing (install the attr package)'
            : `extended attributes and ACLs not restored: ${reasonOf(result.error)}`,
        );
      }
      return;
    }
    const said = new Set<number>();
    for (const text of result.stderr.toString('utf8').split('\n')) {
      const match = /^setfattr: \/proc\/self\/fd\/(\d+): (.*)$/.exec(text);
      const index = match ? Number(match[1]) - FIRST_FD : -1;
      const p = batch[index];
      if (!p || !match || said.has(index)) continue;
      said.add(index);
      problem(p.path, `cannot set an extended attribute or ACL: ${match[2]}`);
    }
    if (result.status !== 0 && said.size === 0) {
      const why = result.stderr.toString('utf8').trim().split('\n')[0] || `exit status ${result.status}`;
      for (const p of batch) problem(p.path, `extended attributes and ACLs not restored: ${why}`);
    }
  }

  function flush(): void {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    try {
      run(batch);
    } finally {
      for (const p of batch) {
        try {
          if (p.mode !== null) fchmodSync(p.fd, p.mode);
        } catch (error) {
          problem(p.path, `cannot set the mode ${p.mode?.toString(8)} (${reasonOf(error)})`);
        }
        closeSync(p.fd);
      }
    }
  }

  return {
    /** Sets `xattrs` on the file open as `fd` (closed once done), then its `mode` when given. */
    add(fd: number, path: string, xattrs: Xattr[], mode: number | null): void {
      pending.push({ fd, path, xattrs, mode });
      if (pending.length >= BATCH) flush();
    },
    flush,
    /** Closes what is left without setting anything (a restore that failed). */
    discard(): void {
      for (const p of pending.splice(0)) closeSync(p.fd);
    },
  };
}
