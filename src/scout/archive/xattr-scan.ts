// Extended attributes (and the POSIX ACLs stored in them) of a job folder's entries. Node has
// no xattr API and a process per file is out of the question for a million files, so
// `getfattr -R` (Debian package `attr`) lists the folder, a part at a time ahead of the
// archive (listXattrs), and only the entries that have any are kept in memory.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
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

/** The line the helper writes after each part's listing, with getfattr's exit status. */
const PART_END = '#backupd-part-end ';

/**
 * Reads `getfattr -d -e base64` output line by line into `into`; entries left with no attribute
 * are not kept. `onPartEnd` gets each PART_END line's exit status (the line cannot be getfattr's:
 * its lines are `# file: …`, `name=value` or empty).
 */
function parser(into: XattrMap, onPartEnd: (status: number) => void) {
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
    if (text.startsWith(PART_END)) {
      finish();
      onPartEnd(Number(text.slice(PART_END.length)));
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
  };
}

const NOT_IN_SNAPSHOT = 'extended attributes, ACLs and file capabilities are not in this snapshot';
const NOT_INSTALLED = `getfattr is not installed (Debian package "attr"): ${NOT_IN_SNAPSHOT}`;

interface ListOptions {
  followSymlinks?: boolean;
  signal?: AbortSignal;
  /** getfattr cannot run at all: told once per listing (and logged). */
  onWarning?: (message: string) => void;
}

/**
 * The helper, one bash per listing: it reads parts from stdin, each its names (relative to the
 * job folder, their exact bytes, since argv from Node is UTF-8) NUL-terminated and ended by an
 * empty name, runs one `getfattr -R` over each part's names and then writes PART_END with
 * getfattr's exit status. One process for the whole listing: a process spawned per part was a
 * fork of the whole Scout each time (~100 at a million files: ~0.6 s of its main thread, and
 * ~270,000 more page faults than the archive's own).
 */
const HELPER = `while IFS= read -r -d '' name; do
  if [ -n "$name" ]; then names+=("$name"); continue; fi
  if [ \${#names[@]} -gt 0 ]; then getfattr -R "$@" -- "\${names[@]}"; fi
  printf '\n${PART_END}%d\n' "$?"
  names=()
done`;

/** Why getfattr's listing of a part left attributes out, or null when it did not. */
function warningOf(status: number | null, error?: NodeJS.ErrnoException): string | null {
  // bash answers 127 when the program is missing (and is itself part of every Debian system).
  if (status === 127 || error?.code === 'ENOENT') return NOT_INSTALLED;
  if (error) return `getfattr could not run (${error.code ?? error.message}): ${NOT_IN_SNAPSHOT}`;
  return null;
}

/**
 * Lists parts of `jobDir` into `into`, one after the other, through one helper process started
 * with the first part. `list` resolves once its part is listed, with a warning when getfattr
 * cannot run at all; it rejects when the listing was stopped (the signal). `end` lets the
 * helper finish after the parts given.
 */
function createLister(jobDir: string, into: XattrMap, options: ListOptions) {
  const waiting: { resolve: (warning: string | null) => void; reject: (error: unknown) => void }[] = [];
  let child: ChildProcessByStdio<Writable, Readable, Readable> | null = null;
  let ended: { status: number | null; error?: NodeJS.ErrnoException } | null = null;
  let stderr = '';
  /** What a part not listed because the helper ended is told: it was there to list it. */
  const endedWarning = () =>
    (ended && warningOf(ended.status, ended.error)) ??
    `the attribute listing stopped (exit ${ended?.status ?? 'by a signal'}) before the whole job was listed: some entries' extended attributes, ACLs and file capabilities are not in this snapshot`;
  const settleAll = () => {
    for (const part of waiting.splice(0)) {
      if (options.signal?.aborted) part.reject(options.signal.reason);
      else part.resolve(endedWarning());
    }
  };
  const parse = parser(into, (status) => {
    // Exit status 1 with output: some entries could not be read (vanished, not permitted); the
    // others are listed. Their names are in stderr, which is only logged.
    if (status !== 0 && status !== 127)
      log.debug(
        { job_dir: jobDir, code: status, stderr: stderr.slice(0, 500) },
        'getfattr reported problems',
      );
    stderr = '';
    waiting.shift()?.resolve(warningOf(status));
    holdProcess();
  });
  /**
   * The helper keeps this process running only while a part is listed: one that waits for
   * parts an archive never asks for (the listing was not stopped) must not keep it alive, and
   * its stdin closes with the process.
   */
  const holdProcess = () => {
    const pipe = child?.stdout as Socket | undefined;
    if (waiting.length > 0) pipe?.ref();
    else pipe?.unref();
  };

  function start(): ChildProcessByStdio<Writable, Readable, Readable> {
    const getfattr = [options.followSymlinks ? '-L' : '-h', '-d', '-m', '-', '-e', 'base64'];
    const helper = spawn('bash', ['-c', HELPER, 'bash', ...getfattr], {
      cwd: jobDir,
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['pipe', 'pipe', 'pipe'],
      signal: options.signal,
    });
    helper.unref();
    (helper.stdin as Socket).unref();
    (helper.stderr as Socket).unref();
    helper.stdin.on('error', () => {}); // a helper that ends early: its outcome says why
    helper.stdout.setEncoding('latin1');
    helper.stdout.on('data', (chunk: string) => parse.push(chunk));
    helper.stderr.setEncoding('utf8');
    helper.stderr.on('data', (chunk: string) => {
      if (stderr.length < 2000) stderr += chunk;
    });
    helper.on('error', (error) => {
      ended ??= { status: null, error };
      settleAll();
    });
    helper.on('close', (status) => {
      ended ??= { status };
      settleAll();
    });
    return helper;
  }

  return {
    list(names: ByteString[]): Promise<string | null> {
      if (options.signal?.aborted) return Promise.reject(options.signal.reason);
      if (ended) return Promise.resolve(endedWarning());
      child ??= start();
      const listed = new Promise<string | null>((resolve, reject) => waiting.push({ resolve, reject }));
      holdProcess();
      child.stdin.write(Buffer.from(`${names.join('\0')}\0\0`, 'latin1'));
      return listed;
    },
    end(): void {
      child?.stdin.end();
    },
  };
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
  const lister = createLister(jobDir, found, options);
  const listed = lister.list(['.']);
  lister.end();
  const warning = await listed;
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
 * asks for, and listed one after the other by one helper process (createLister). So an archive waits for the part that holds its entry, not for the whole tree
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
  const lister = createLister(jobDir, found, options);
  let started = 0;
  const start = (part: Part | undefined) => {
    if (!part || part.listed) return;
    started += 1;
    part.listed = lister.list(part.names ?? []).then(
      (warning) => {
        warn(warning);
        part.done = true;
      },
      () => {
        part.done = true; // stopped (the signal): nothing more to list
      },
    );
    part.names = null;
    if (started === parts.length) lister.end();
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
