// Extended attributes (and the POSIX ACLs stored in them) of a job folder's entries. Node has
// no xattr API and a process per file is out of the question for a million files, so one
// `getfattr -R` (Debian package `attr`) lists the whole folder while the walk runs, and only
// the entries that have any are kept in memory.
import { spawn } from 'node:child_process';
import { logger } from '../../core/log.ts';
import type { ByteString } from '../jobs/byte-order.ts';

const log = logger.child({ mod: 'scout/xattrs' });

export interface Xattr {
  /** The attribute's name, a byte string ("user.x", "system.posix_acl_access", …). */
  name: ByteString;
  value: Buffer;
}

/** Attributes by relative path (a byte string, '/'-separated), for the entries that have any. */
export type XattrMap = Map<ByteString, Xattr[]>;

/**
 * Left out: SELinux labels belong to the policy of the host a snapshot is restored on (GNU tar
 * keeps them apart too, under --selinux), and on SELinux hosts every file has one, which
 * would put every file of the job in memory.
 */
const LEFT_OUT = new Set(['security.selinux']);

/** getfattr writes `\`, newline, carriage return (and `=` in names) as a backslash and 3 octal digits. */
const unquote = (text: ByteString): ByteString =>
  text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8) & 0xff));

/** Reads `getfattr -d -e base64` output line by line into `into`. */
function parser(into: XattrMap) {
  let current: Xattr[] | null = null;
  let rest = '';
  const line = (text: ByteString) => {
    if (text.startsWith('# file: ')) {
      const path = unquote(text.slice(8));
      current = path === '.' ? null : [];
      if (current) into.set(path, current);
      return;
    }
    const eq = text.indexOf('=');
    if (!current || eq <= 0) return;
    const name = unquote(text.slice(0, eq));
    const raw = text.slice(eq + 1);
    if (LEFT_OUT.has(name) || !raw.startsWith('0s')) return;
    current.push({ name, value: Buffer.from(raw.slice(2), 'base64') });
  };
  return {
    push(chunk: string) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const text of lines) line(text);
    },
    end() {
      if (rest) line(rest);
      for (const [path, list] of into) if (list.length === 0) into.delete(path);
    },
  };
}

/**
 * The extended attributes under `jobDir` (not the folder's own), by relative path. An entry
 * getfattr cannot read is missing from the map (the archive then has its data without its
 * attributes); no `getfattr` at all gives an empty map and one warning.
 */
export async function scanXattrs(
  jobDir: string,
  options: { followSymlinks?: boolean; signal?: AbortSignal; onWarning?: (message: string) => void } = {},
): Promise<XattrMap> {
  const found: XattrMap = new Map();
  const parse = parser(found);
  const args = ['-R', options.followSymlinks ? '-L' : '-h', '-d', '-m', '-', '-e', 'base64', '--', '.'];
  const child = spawn('getfattr', args, {
    cwd: jobDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    signal: options.signal,
  });
  child.stdout.setEncoding('latin1');
  child.stdout.on('data', (chunk: string) => parse.push(chunk));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 2000) stderr += chunk;
  });
  const outcome = await new Promise<{ code: number | null; error?: NodeJS.ErrnoException }>((resolve) => {
    child.on('error', (error) => resolve({ code: null, error }));
    child.on('close', (code) => resolve({ code }));
  });
  options.signal?.throwIfAborted();
  if (outcome.error) {
    const message =
      outcome.error.code === 'ENOENT'
        ? 'getfattr is not installed (Debian package "attr"): extended attributes, ACLs and file capabilities are not in this snapshot'
        : `getfattr could not run (${outcome.error.code ?? outcome.error.message}): extended attributes, ACLs and file capabilities are not in this snapshot`;
    log.warn({ job_dir: jobDir }, message);
    options.onWarning?.(message);
    return new Map();
  }
  parse.end();
  // Exit status 1 with output: some entries could not be read (vanished, not permitted); the
  // others are listed. Their names are in stderr, which is only logged.
  if (outcome.code !== 0)
    log.debug(
      { job_dir: jobDir, code: outcome.code, stderr: stderr.slice(0, 500) },
      'getfattr reported problems',
    );
  return found;
}
