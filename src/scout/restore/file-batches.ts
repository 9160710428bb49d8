// Small new files written on a thread of their own (file-writer-worker.ts), so their system
// calls (most of a restore of many small files) run beside decryption, zstd and tar reading.
import { closeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { shown } from './byte-paths.ts';
import { modeNotSet, ownerNotSet, SET_ID, timeNotSet, validId } from './entry-metadata.ts';
import { DiskFullError, isDiskFull, isEntryProblem, reasonOf } from './entry-problems.ts';
import {
  type BatchAnswer,
  type BatchFolder,
  FILE_FIELDS,
  FILE_WRITER_SOURCE,
  type FileProblems,
  MOVED,
  WRITTEN,
} from './file-writer-worker.ts';
import type { Place } from './new-files.ts';
import type { RestoreRun } from './restore-run.ts';
import type { OpenFolder, SafeTree } from './safe-tree.ts';
import { hasHoleBlock } from './sparse-writer.ts';
import type { TarEntry } from './tar-reader.ts';
import { restorableXattrs } from './xattr-applier.ts';

/**
 * Files up to this size go to the thread: copying a bigger one into a batch costs more than
 * its system calls, which the restore's own thread then makes.
 */
const QUEUED_MAX = 64 * 1024;
/** A batch's buffer: a queued file always fits one. */
const BATCH_BUFFER = 1024 * 1024;
/** A batch goes once it holds this many bytes or files. */
const SEND_BYTES = 512 * 1024;
const SEND_FILES = 128;
/** Batches given to the thread and not yet answered, at most: memory is (this + 1) buffers. */
const IN_FLIGHT = 4;
/** Writing threads: batches go to them in turn, so the file system's work of two runs at once. */
const WRITERS = 2;
/** The thread keeps a few small objects per batch: a small heap is plenty. */
const WRITER_HEAP = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 };

/** A file given to the thread, as the restore knows it again once answered. */
export interface QueuedFile {
  entry: TarEntry;
  at: Place;
}

/**
 * What the restore keeps of a batch until it is answered: the files' paths and their open
 * folders (the rest is in `files`, handed back with the answer). One string a file: whatever
 * lives until the answer outlives young-generation collections and ends up as old garbage.
 */
interface Sent {
  rels: string[];
  openFolders: OpenFolder[];
}

interface OpenBatch extends Sent {
  id: number;
  buffer: ArrayBuffer;
  /** `buffer` as a Buffer, made once a batch (not once a file). */
  view: Buffer;
  bytes: number;
  files: Float64Array<ArrayBuffer>;
  paths: (string | Buffer)[];
  folders: BatchFolder[];
}

const NO_NAME = Buffer.alloc(0);

/** A batch's buffers, handed back with its answer. */
interface Buffers {
  buffer: ArrayBuffer;
  files: Float64Array<ArrayBuffer>;
}

/**
 * New files for folders the restore made, queued in batches for the writing thread. The
 * folders' descriptors they are written through stay open until their batch is answered
 * (`closeLater`, given to SafeTree as `releaseFd`); the thread checks each file's folder path
 * first, as the restore does before every entry. Answers are taken in (`settle`) by the
 * restore's own loop: each file is then counted, its inode remembered for hard links, its
 * metadata problems reported; a name found taken goes the ordinary way (`onTaken`).
 */
export class FileBatches {
  readonly #run: RestoreRun;
  readonly #onTaken: (file: QueuedFile, data: Buffer) => Promise<void> | undefined;
  readonly #threads: (Worker | null)[] = [];
  #open: OpenBatch | null = null;
  readonly #inFlight = new Map<number, Sent>();
  #safe: SafeTree | null = null;
  /** Answers by batch id, taken in (`settle`) in the order the batches went. */
  readonly #answered = new Map<number, BatchAnswer>();
  /** The id of the next batch to take in. */
  #settled = 0;
  readonly #buffers: Buffers[] = [];
  readonly #closeLater: { fd: number; after: number }[] = [];
  /** The paths (rel) of the files queued and not yet taken in. */
  readonly #queuedRels = new Set<string>();
  #nextId = 0;
  #failure: Error | null = null;
  #wake: (() => void) | null = null;

  constructor(run: RestoreRun, onTaken: (file: QueuedFile, data: Buffer) => Promise<void> | undefined) {
    this.#run = run;
    this.#onTaken = onTaken;
  }

  /**
   * Whether the thread can write this new file: a small one (64 KiB) read in whole, with no holes to
   * keep, no extended attributes, and an owner chown accepts (as root).
   */
  fits(entry: TarEntry, data: Buffer): boolean {
    const { asRoot } = this.#run;
    return (
      data.length <= QUEUED_MAX &&
      (!asRoot || (validId(entry.uid) && validId(entry.gid))) &&
      restorableXattrs(entry.xattrs, asRoot).length === 0 &&
      !hasHoleBlock(data)
    );
  }

  /** Queues a new file; a promise when the restore must wait for room (or take in answers). */
  add(at: Place, entry: TarEntry, data: Buffer): Promise<void> | undefined {
    if (this.#failure) throw this.#failure;
    if (this.#ready()) return this.#settle().then(() => this.add(at, entry, data));
    let batch = this.#open;
    if (batch && batch.bytes + data.length > BATCH_BUFFER) {
      if (this.#inFlight.size >= IN_FLIGHT) return this.#roomThen(() => this.add(at, entry, data));
      this.#send(batch);
      batch = null;
    }
    batch ??= this.#newBatch();
    data.copy(batch.view, batch.bytes);
    let mode = entry.mode & 0o7777;
    if (!this.#run.asRoot) mode &= ~SET_ID;
    if (batch.openFolders[batch.openFolders.length - 1] !== at.parent) {
      batch.openFolders.push(at.parent);
      batch.folders.push({ path: at.safe.pathOf(at.parent), dev: at.parent.dev, ino: at.parent.ino });
    }
    this.#safe = at.safe;
    const n = batch.paths.length * FILE_FIELDS;
    const { files } = batch;
    files[n] = batch.bytes;
    files[n + 1] = data.length;
    files[n + 2] = mode;
    files[n + 3] = entry.uid;
    files[n + 4] = entry.gid;
    files[n + 5] = entry.mtimeMs;
    files[n + 6] = batch.folders.length - 1;
    files[n + 7] = entry.mode;
    batch.paths.push(at.safe.at(at.parent, at.name));
    batch.rels.push(at.rel);
    batch.bytes += data.length;
    this.#queuedRels.add(at.rel);
    if (batch.bytes >= SEND_BYTES || batch.paths.length >= SEND_FILES) {
      if (this.#inFlight.size >= IN_FLIGHT)
        return this.#roomThen(() => {
          this.#sendOpen();
          return undefined;
        });
      this.#send(batch);
    }
    return undefined;
  }

  /**
   * Closes the folder descriptor `fd` once no queued file can still be written through it (at
   * once when nothing is queued).
   */
  closeLater(fd: number): void {
    if (!this.#open && this.#inFlight.size === 0) closeSync(fd);
    else this.#closeLater.push({ fd, after: this.#nextId - 1 });
  }

  /** Whether a file queued and not yet taken in has the path `rel`. */
  isQueued(rel: string): boolean {
    return this.#queuedRels.has(rel);
  }

  /** Whether a file queued and not yet taken in has a path `rel` lies below (a file in the way of a folder). */
  isQueuedAbove(rel: string): boolean {
    if (this.#queuedRels.size === 0) return false;
    for (let end = rel.indexOf('/'); end >= 0; end = rel.indexOf('/', end + 1)) {
      if (this.#queuedRels.has(rel.slice(0, end))) return true;
    }
    return false;
  }

  /** Sends what is queued and waits until every file is written and taken in. */
  async drain(): Promise<void> {
    if (this.#open) this.#sendOpen();
    while (this.#inFlight.size > 0) {
      if (!this.#ready()) await this.#answer();
      await this.#settle();
    }
  }

  /**
   * Stops the threads and closes the descriptors kept for them. A restore that stopped early (a
   * full disk, a cancel) first waits for the batches still on the threads to be answered: each
   * file a thread could not write whole it removes itself, and a thread stopped in the middle of
   * a file would leave it half-written. A thread that failed is not waited for.
   */
  async close(): Promise<void> {
    while (this.#inFlight.size > this.#answered.size && !this.#failure) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
    const threads = this.#threads.splice(0);
    await Promise.all(threads.map((thread) => thread?.terminate()));
    for (const { fd } of this.#closeLater.splice(0)) closeSync(fd);
  }

  /** Whether the answer of the next batch to take in is here. */
  #ready(): boolean {
    return this.#answered.has(this.#settled);
  }

  #newBatch(): OpenBatch {
    const { buffer, files } = this.#buffers.pop() ?? {
      buffer: new ArrayBuffer(BATCH_BUFFER),
      files: new Float64Array(SEND_FILES * FILE_FIELDS),
    };
    this.#open = {
      id: this.#nextId,
      buffer,
      view: Buffer.from(buffer),
      bytes: 0,
      files,
      paths: [],
      folders: [],
      rels: [],
      openFolders: [],
    };
    this.#nextId += 1;
    return this.#open;
  }

  #sendOpen(): void {
    if (this.#open) this.#send(this.#open);
  }

  #send(batch: OpenBatch): void {
    this.#open = null;
    this.#inFlight.set(batch.id, { rels: batch.rels, openFolders: batch.openFolders });
    const { id, buffer, files, paths, folders } = batch;
    this.#threadFor(id).postMessage({ id, buffer, files, paths, folders, chown: this.#run.asRoot }, [
      buffer,
      files.buffer,
    ]);
  }

  async #roomThen(next: () => Promise<void> | undefined): Promise<void> {
    while (this.#inFlight.size >= IN_FLIGHT) {
      if (!this.#ready()) await this.#answer();
      await this.#settle();
    }
    await next();
  }

  /** The thread batch `id` goes to (started when first needed: a restore of one batch starts one). */
  #threadFor(id: number): Worker {
    const slot = id % WRITERS;
    const running = this.#threads[slot];
    if (running) return running;
    const thread = new Worker(FILE_WRITER_SOURCE, { eval: true, resourceLimits: WRITER_HEAP });
    thread.on('message', (answer: BatchAnswer) => {
      this.#answered.set(answer.id, answer);
      this.#wakeUp();
    });
    thread.on('error', (error: Error) => this.#fail(error));
    thread.on('exit', (code) => {
      if (this.#threads.includes(thread))
        this.#fail(new Error(`the restore's file-writing thread stopped (exit code ${code})`));
    });
    this.#threads[slot] = thread;
    return thread;
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#wakeUp();
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Waits for the thread's next answer (or its failure). */
  async #answer(): Promise<void> {
    if (this.#failure) throw this.#failure;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
    if (this.#failure) throw this.#failure;
  }

  /** Takes in the answers received, in the order the batches went. */
  async #settle(): Promise<void> {
    for (let answer = this.#answered.get(this.#settled); answer; answer = this.#answered.get(this.#settled)) {
      this.#answered.delete(this.#settled);
      this.#settled += 1;
      const sent = this.#inFlight.get(answer.id) as Sent;
      this.#inFlight.delete(answer.id);
      const bytes = Buffer.from(answer.buffer);
      const { files, results, problems } = answer;
      for (const [i, rel] of sent.rels.entries()) {
        this.#queuedRels.delete(rel);
        const what = results[i * 3];
        const found = problems.get(i);
        const n = i * FILE_FIELDS;
        if (what === WRITTEN && !found) {
          // Most files: counted, their inode remembered (a hard link may point at them).
          this.#run.ownFiles.addInode({
            dev: results[i * 3 + 1] as number,
            ino: results[i * 3 + 2] as number,
          });
          this.#run.note('add', rel);
          this.#run.fileDone({ size: files[n + 1] as number });
          continue;
        }
        const file = this.#queuedFile(sent, files, i);
        if (what === MOVED) throw file.at.safe.movedError(file.at.parent);
        if (found?.error?.code === 'EEXIST') {
          await this.#onTaken(file, Buffer.copyBytesFrom(bytes, files[n] as number, files[n + 1] as number));
        } else if (what === WRITTEN) {
          this.#takeIn(file, results[i * 3 + 1] as number, results[i * 3 + 2] as number, found);
        } else this.#notWritten(file, found);
      }
      this.#buffers.push({ buffer: answer.buffer, files: answer.files });
      this.#closeUpTo(answer.id);
    }
  }

  /** File `i` of a batch as an entry and its place again. */
  #queuedFile(sent: Sent, files: Float64Array, i: number): QueuedFile {
    const n = i * FILE_FIELDS;
    const rel = sent.rels[i] as string;
    const entry: TarEntry = {
      path: NO_NAME,
      type: '0',
      mode: files[n + 7] as number,
      mtimeMs: files[n + 5] as number,
      size: files[n + 1] as number,
      linkname: NO_NAME,
      uid: files[n + 3] as number,
      gid: files[n + 4] as number,
      xattrs: [],
    };
    const parent = sent.openFolders[files[n + 6] as number] as OpenFolder;
    const at = { safe: this.#safe as SafeTree, parent, rel, name: rel.slice(rel.lastIndexOf('/') + 1) };
    return { entry, at };
  }

  /** A file written whose owner, mode or time could not be set: counted, remembered, its problems reported. */
  #takeIn({ entry, at }: QueuedFile, dev: number, ino: number, found: FileProblems | undefined): void {
    const run = this.#run;
    run.ownFiles.addInode({ dev, ino });
    let mode = entry.mode & 0o7777;
    if (!run.asRoot || found?.chown) mode &= ~SET_ID;
    if (found?.chown) run.problem(at.rel, ownerNotSet(entry, found.chown, (entry.mode & SET_ID) !== 0));
    if (found?.chmod) run.problem(at.rel, modeNotSet(mode, found.chmod));
    if (found?.utimes) run.problem(at.rel, timeNotSet(found.utimes));
    run.note('add', at.rel);
    run.fileDone(entry);
  }

  /** A file the thread could not write: a problem of that entry, or what stops the restore (a full disk). */
  #notWritten({ at }: QueuedFile, found: FileProblems | undefined): void {
    const error = Object.assign(new Error(found?.error?.message ?? 'not written'), {
      code: found?.error?.code,
    });
    if (isDiskFull(error)) throw new DiskFullError(shown(at.rel), error);
    if (!isEntryProblem(error)) throw error;
    this.#run.problem(at.rel, `not restored: ${reasonOf(error)}`);
  }

  #closeUpTo(id: number): void {
    while (this.#closeLater.length > 0 && (this.#closeLater[0] as { after: number }).after <= id) {
      closeSync((this.#closeLater.shift() as { fd: number }).fd);
    }
  }
}
