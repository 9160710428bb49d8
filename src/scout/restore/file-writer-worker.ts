// The program of the restore's file-writing thread (file-batches.ts): small new files, written
// with synchronous system calls, a batch at a time, off the thread that decrypts and reads tar.
/**
 * Numbers per file in a batch's `files`: offset, length, mode to set, uid, gid, mtimeMs,
 * folder, and the entry's own mode (for the restore's problems; the thread does not read it).
 */
export const FILE_FIELDS = 8;

/** A folder files of a batch go into: its path from the root, checked to still lead to (dev, ino). */
export interface BatchFolder {
  path: string | Uint8Array;
  dev: number;
  ino: number;
}

/**
 * Small new files to write: their bytes in `buffer`, their numbers in `files` (FILE_FIELDS
 * each: where the bytes are, the mode to set, the owner, the time, the index of the folder in
 * `folders`), and their paths through their open folders (`SafeTree.at`: /proc/self/fd/N/name
 * on Linux). With `chown` (a restore as root) the owner is set when the new file's is not it.
 */
export interface Batch {
  id: number;
  buffer: ArrayBuffer;
  files: Float64Array<ArrayBuffer>;
  paths: (string | Uint8Array)[];
  folders: BatchFolder[];
  chown: boolean;
}

/** Per file in `BatchAnswer.results`: WRITTEN (dev, ino follow), or not. */
export const WRITTEN = 1;
export const NOT_WRITTEN = 2;
/** The file's folder no longer is where it was: this file and the rest of the batch were not written. */
export const MOVED = 3;

/**
 * What became of a file that was not written (`error`: the open or a write failed, the file is
 * removed; EEXIST when the name was taken), or whose metadata calls failed (their reasons).
 */
export interface FileProblems {
  chown?: string;
  chmod?: string;
  utimes?: string;
  error?: { code?: string; message: string };
}

/** `results`: 3 numbers per file (what became of it, dev, ino); `problems` by the file's index. */
export interface BatchAnswer {
  id: number;
  buffer: ArrayBuffer;
  files: Float64Array<ArrayBuffer>;
  results: Float64Array<ArrayBuffer>;
  problems: Map<number, FileProblems>;
}

/**
 * The thread's program, run from its source text (`eval`, like src/scout/archive/zstd-workers.ts),
 * so it needs no file beside the bundle. Self-contained: it may use nothing from this module.
 * Per file: the folder check (lstat), open with O_EXCL|O_NOFOLLOW (never over or through
 * anything), the writes, fstat (the inode, for hard links; the owner), the owner when it
 * differs, mode, time, close: what src/scout/restore/new-files.ts does for a file in place.
 */
function fileWriterMain(): void {
  const { parentPort } = process.getBuiltinModule('node:worker_threads');
  const fs = process.getBuiltinModule('node:fs');
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const NEW_FILE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
  const SET_ID = 0o6000;
  const reason = (error: unknown) =>
    (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error);

  /** A path as the message gives it: text, or bytes (a Buffer arrives as a Uint8Array). */
  const fsPath = (path: string | Uint8Array) =>
    typeof path === 'string' ? path : Buffer.from(path.buffer, path.byteOffset, path.byteLength);

  /** Writes file `i` of `batch`; answers its problems, if any (`moved` for a folder moved away). */
  function write(batch: Batch, bytes: Buffer, i: number, results: Float64Array): FileProblems | undefined {
    const n = i * 8;
    const f = batch.files;
    const folder = batch.folders[f[n + 6] as number] as BatchFolder;
    const now = fs.lstatSync(fsPath(folder.path), { throwIfNoEntry: false });
    if (now?.dev !== folder.dev || now.ino !== folder.ino) {
      results[i * 3] = 3;
      return undefined;
    }
    const path = fsPath(batch.paths[i] as string | Uint8Array);
    results[i * 3] = 2;
    let fd: number;
    try {
      fd = fs.openSync(path, NEW_FILE, 0o600);
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      return { error: { code, message } };
    }
    const problems: FileProblems = {};
    try {
      const end = (f[n] as number) + (f[n + 1] as number);
      for (let at = f[n] as number; at < end; ) at += fs.writeSync(fd, bytes, at, end - at);
      const made = fs.fstatSync(fd);
      let mode = f[n + 2] as number;
      const uid = f[n + 3] as number;
      const gid = f[n + 4] as number;
      if (batch.chown && (made.uid !== uid || made.gid !== gid)) {
        try {
          fs.fchownSync(fd, uid, gid);
        } catch (error) {
          problems.chown = reason(error);
          mode &= ~SET_ID;
        }
      }
      try {
        fs.fchmodSync(fd, mode);
      } catch (error) {
        problems.chmod = reason(error);
      }
      const time = (f[n + 5] as number) / 1000;
      try {
        fs.futimesSync(fd, time, time);
      } catch (error) {
        problems.utimes = reason(error);
      }
      results[i * 3] = 1;
      results[i * 3 + 1] = made.dev;
      results[i * 3 + 2] = made.ino;
    } catch (error) {
      try {
        fs.closeSync(fd);
        fs.rmSync(path, { force: true });
      } catch {
        // The write's own error is the one reported.
      }
      const { code, message } = error as NodeJS.ErrnoException;
      return { error: { code, message } };
    }
    fs.closeSync(fd);
    return problems.chown || problems.chmod || problems.utimes ? problems : undefined;
  }

  parentPort?.on('message', (batch: Batch) => {
    const bytes = Buffer.from(batch.buffer);
    const count = batch.paths.length;
    const results = new Float64Array(count * 3);
    const problems = new Map<number, FileProblems>();
    for (let i = 0; i < count; i += 1) {
      const found = write(batch, bytes, i, results);
      if (found) problems.set(i, found);
      if (results[i * 3] === 3) break;
    }
    const answer: BatchAnswer = { id: batch.id, buffer: batch.buffer, files: batch.files, results, problems };
    parentPort.postMessage(answer, [batch.buffer, batch.files.buffer, results.buffer]);
  });
}

export const FILE_WRITER_SOURCE = `(${fileWriterMain.toString()})()`;
