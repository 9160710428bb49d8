import { type FileHandle, open } from 'node:fs/promises';

/** An archive's size and SHA-256, known once it is complete. */
export interface ArchiveEnd {
  size: number;
  sha256: string;
}

/**
 * What an upload reads: a file whose first `available()` bytes do not change again, and its
 * size and SHA-256 once the archive is complete. A staged archive is complete from the start;
 * an archive the pipeline is still writing grows (`growingArchive`).
 */
export interface ArchiveSource {
  /** The file to read chunks from (an open handle when the file is renamed while read). */
  file(): Promise<string | FileHandle>;
  available(): number;
  /** Size and SHA-256 once the archive is complete; null while it grows. */
  end(): ArchiveEnd | null;
  /** Resolves when more bytes are there or the archive is complete; rejects when it failed. */
  more(signal?: AbortSignal): Promise<void>;
  /** Lets go of the file (the upload is over). */
  close(): Promise<void>;
}

/** A complete archive in the staging folder. */
export function stagedSource(path: string, end: ArchiveEnd): ArchiveSource {
  return {
    file: async () => path,
    available: () => end.size,
    end: () => end,
    more: async () => {},
    close: async () => {},
  };
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The archive the pipeline is writing to `<path>.part` (src/scout/archive/pipeline.ts), fed by
 * its `onWritten` counts and ended by `complete` (its result) or `fail` (cancelled, failed, or
 * not to be sent as it was announced). The file is opened once, on the first read: `.part` while
 * it is written, the final name after the rename; the handle reads the same file either way.
 */
export function growingArchive(path: string) {
  let written = 0;
  let end: ArchiveEnd | null = null;
  let failure: Error | null = null;
  let handle: Promise<FileHandle> | null = null;
  let waiting: (() => void)[] = [];
  const wake = () => {
    const woken = waiting;
    waiting = [];
    for (const resume of woken) resume();
  };

  async function openFile(): Promise<FileHandle> {
    try {
      return await open(`${path}.part`, 'r');
    } catch (error) {
      if (!isMissing(error)) throw error;
      return open(path, 'r');
    }
  }

  const source: ArchiveSource = {
    file() {
      if (failure) return Promise.reject(failure);
      handle ??= openFile();
      return handle;
    },
    available: () => written,
    end: () => end,
    more(signal) {
      if (failure) return Promise.reject(failure);
      if (end) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const stop = () => reject(signal?.reason);
        if (signal?.aborted) return stop();
        signal?.addEventListener('abort', stop, { once: true });
        waiting.push(() => {
          signal?.removeEventListener('abort', stop);
          if (failure) reject(failure);
          else resolve();
        });
      });
    },
    async close() {
      const opened = handle;
      handle = null;
      await opened?.then((h) => h.close()).catch(() => {});
    },
  };

  return {
    source,
    /** The pipeline wrote `bytes` so far. */
    written(bytes: number) {
      written = bytes;
      wake();
    },
    complete(result: ArchiveEnd) {
      written = result.size;
      end = result;
      wake();
    },
    fail(error: Error) {
      failure ??= error;
      wake();
    },
  };
}

export type GrowingArchive = ReturnType<typeof growingArchive>;
