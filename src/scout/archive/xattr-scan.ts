// Extended attributes (and the POSIX ACLs stored in them) of a job folder's entries. Node has
// no xattr API and a process per file is out of the question for a million files, so
// `getfattr -R` (Debian package `attr`) lists the folder, a part at a time ahead of the
// archive (listXattrs), and only the entries that have any are kept in memory.
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { logger } from '../../core/log.ts';
import { type ByteString, compareBytes } from '../jobs/byte-order.ts';

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

/** Reads `getfattr -d -e base64` output line by line into `into`; entries left with no attribute are not kept. */
function parser(into: XattrMap) {
  let current: { path: ByteString; list: Xattr[] } | null = null;
  let rest = '';
  const finish = () => {
    if (current && current.list.length === 0) into.delete(current.path);
    current = null;
  };
  const line = (text: ByteString) => {
    if (text.startsWith('# file: ')) {
      finish();
      const path = unquote(text.slice(8));
      if (path === '.') return;
      current = { path, list: [] };
      into.set(path, current.list);
      return;
    }
    const eq = text.indexOf('=');
    if (!current || eq <= 0) return;
    const name = unquote(text.slice(0, eq));
    const raw = text.slice(eq + 1);
    if (LEFT_OUT.has(name) || !raw.startsWith('0s')) return;
    current.list.push({ name, value: Buffer.from(raw.slice(2), 'base64') });
  };
  return {
    push(chunk: string) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const text of lines) line(text);
    },
    end() {
      if (rest) line(rest);
      finish();
    },
  };
}

const NOT_IN_SNAPSHOT = 'extended attributes, ACLs and file capabilities are not in this snapshot';

interface ListOptions {
  followSymlinks?: boolean;
  signal?: AbortSignal;
  /** getfattr cannot run at all: told once per listing (and logged). */
  onWarning?: (message: string) => void;
}

/**
 * One `getfattr -R` over `names` (relative to `jobDir`, their exact bytes: xargs reads them
 * from stdin, since argv from Node is UTF-8), its attributes put into `into`. Answers a
 * warning when getfattr cannot run at all.
 */
async function listInto(
  jobDir: string,
  names: ByteString[],
  into: XattrMap,
  options: ListOptions,
): Promise<string | null> {
  const parse = parser(into);
  const args = [
    '-0',
    'getfattr',
    '-R',
    options.followSymlinks ? '-L' : '-h',
    '-d',
    '-m',
    '-',
    '-e',
    'base64',
    '--',
  ];
  const child = spawn('xargs', args, {
    cwd: jobDir,
    stdio: ['pipe', 'pipe', 'pipe'],
    signal: options.signal,
  });
  child.stdin.on('error', () => {}); // a child that ends early: its outcome says why
  child.stdin.end(Buffer.from(`${names.join('\0')}\0`, 'latin1'));
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
  // xargs answers 127 when the program is missing (and is itself part of every Debian system).
  if (outcome.code === 127 || outcome.error?.code === 'ENOENT')
    return `getfattr is not installed (Debian package "attr"): ${NOT_IN_SNAPSHOT}`;
  if (outcome.error)
    return `getfattr could not run (${outcome.error.code ?? outcome.error.message}): ${NOT_IN_SNAPSHOT}`;
  parse.end();
  // Exit status 123 (getfattr's 1) with output: some entries could not be read (vanished, not
  // permitted); the others are listed. Their names are in stderr, which is only logged.
  if (outcome.code !== 0)
    log.debug(
      { job_dir: jobDir, code: outcome.code, stderr: stderr.slice(0, 500) },
      'getfattr reported problems',
    );
  return null;
}

/** Tells a listing's warning once, to the log and to `onWarning`. */
function warnOnce(jobDir: string, options: ListOptions) {
  let told = false;
  return (warning: string | null) => {
    if (!warning || told) return;
    told = true;
    log.warn({ job_dir: jobDir }, warning);
    options.onWarning?.(warning);
  };
}

/**
 * The extended attributes under `jobDir` (not the folder's own), by relative path, listed in
 * one run. An entry getfattr cannot read is missing from the map (the archive then has its
 * data without its attributes); no `getfattr` at all gives an empty map and one warning.
 */
export async function scanXattrs(jobDir: string, options: ListOptions = {}): Promise<XattrMap> {
  const found: XattrMap = new Map();
  const warning = await listInto(jobDir, ['.'], found, options);
  warnOnce(jobDir, options)(warning);
  return warning ? new Map() : found;
}

/** The attributes of an entry by its relative path; a promise while its part of the tree is listed. */
export interface XattrLookup {
  get(path: ByteString): Xattr[] | undefined | Promise<Xattr[] | undefined>;
}

/** Parts listed ahead of the one an archive asks for. */
const AHEAD = 2;
/** Files and links of the job folder itself listed together, at most this many per part. */
const LOOSE_NAMES = 4096;

/**
 * The extended attributes under `jobDir`, listed part by part as an archive reaches them
 * (XattrLookup): each folder of the job folder is one part (`getfattr -R` over it), its files
 * and links a few more, started in the byte order of their names, AHEAD of the part an archive
 * asks for. So an archive waits for the part that holds its entry, not for the whole tree
 * (one `getfattr -R` over a million files took 5-10 s before the first entry could be written).
 * An entry in no part (created since the listing began) has no attributes, as in a listing
 * made before it. Same outcome as scanXattrs otherwise, including the warning. What it holds:
 * the attributes found, a name per part, and the names of the parts not yet started.
 */
export function listXattrs(jobDir: string, options: ListOptions = {}): XattrLookup {
  const found: XattrMap = new Map();
  const warn = warnOnce(jobDir, options);
  interface Part {
    /** The part's first name: parts are found by it (binary search, names in byte order). */
    first: ByteString;
    /** Its names until it is started (then the listing holds them no longer). */
    names: ByteString[] | null;
    order: number;
    listed: Promise<void> | null;
    done: boolean;
    /** An archive asked for an entry of it: the parts after it are started. */
    asked: boolean;
  }
  const parts: Part[] = [];
  const start = (part: Part | undefined) => {
    if (!part || part.listed) return;
    part.listed = listInto(jobDir, part.names ?? [], found, options).then(
      (warning) => {
        warn(warning);
        part.done = true;
      },
      () => {
        part.done = true; // stopped (the signal): nothing more to list
      },
    );
    part.names = null;
  };
  const divided = readdir(jobDir, { encoding: 'latin1', withFileTypes: true }).then(
    (entries) => {
      let loose: Part | null = null;
      const sorted = entries.sort((a, b) => compareBytes(a.name, b.name));
      for (const entry of sorted) {
        let part: Part | null = loose;
        if (entry.isDirectory() || !part?.names || part.names.length >= LOOSE_NAMES) {
          part = {
            first: entry.name,
            names: [],
            order: parts.length,
            listed: null,
            done: false,
            asked: false,
          };
          parts.push(part);
        }
        loose = entry.isDirectory() ? null : part;
        part.names?.push(entry.name);
      }
      for (let i = 0; i < AHEAD; i += 1) start(parts[i]);
    },
    () => {}, // the walk reports a job folder it cannot read
  );
  /** The part whose names would hold `name`: the last one that starts at or before it. */
  const partOf = (name: ByteString): Part | undefined => {
    let low = 0;
    let high = parts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareBytes((parts[middle] as Part).first, name) <= 0) low = middle + 1;
      else high = middle;
    }
    return parts[low - 1];
  };
  const lookup = (path: ByteString): Xattr[] | undefined | Promise<Xattr[] | undefined> => {
    const slash = path.indexOf('/');
    const part = partOf(slash < 0 ? path : path.slice(0, slash));
    if (!part) return undefined;
    if (!part.asked) {
      part.asked = true;
      for (let i = part.order; i <= part.order + AHEAD; i += 1) start(parts[i]);
    }
    if (part.done) return found.get(path);
    return (part.listed as Promise<void>).then(() => found.get(path));
  };
  let ready = false;
  void divided.then(() => {
    ready = true;
  });
  return {
    get: (path) => (ready ? lookup(path) : divided.then(() => lookup(path))),
  };
}
