// Reading and writing a folder's `.upload_dir` without following a link planted in its place:
// the file is opened with O_NOFOLLOW (and O_NONBLOCK, so a FIFO cannot hang the Scout) and
// must be a regular file. A symlinked marker could otherwise make the Scout read or overwrite
// any file it can reach.
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { conflict } from '../../core/errors.ts';
import { MARKER } from './marker.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A new marker is readable by the folder's users, whatever the process umask (077, src/main.ts). */
const NEW_MARKER_MODE = 0o644;

export const MAX_MARKER_BYTES = 64 * 1024;

type Problem = 'a symbolic link' | 'a folder' | 'not a regular file' | 'larger than 64 KiB';

/** A marker the Scout will not use: a link, a folder, a device or FIFO, or too large. */
export class MarkerFileError extends Error {
  override name = 'MarkerFileError';
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(`${MARKER} is ${problem}`);
    this.problem = problem;
  }
}

/** Opens `folder`'s marker, refusing a symlink (ELOOP) and anything but a regular file. */
async function openMarker(folder: string, flags: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(join(folder, MARKER), flags | O_NOFOLLOW | O_NONBLOCK, NEW_MARKER_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new MarkerFileError('a symbolic link');
    if (code === 'EISDIR') throw new MarkerFileError('a folder');
    // A FIFO without a reader refuses a non-blocking writer.
    if (code === 'ENXIO') throw new MarkerFileError('not a regular file');
    throw error;
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new MarkerFileError(stats.isDirectory() ? 'a folder' : 'not a regular file');
  }
  return handle;
}

/** The marker's text (MarkerFileError or the file system's error when it cannot be used). */
export async function readMarkerText(folder: string): Promise<string> {
  const handle = await openMarker(folder, O_RDONLY);
  try {
    const buffer = Buffer.alloc(MAX_MARKER_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_MARKER_BYTES) throw new MarkerFileError('larger than 64 KiB');
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Writes the marker in place; a symlink or special file there is a 409 that says what to do. */
export async function writeMarkerText(folder: string, relativePath: string, text: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await openMarker(folder, O_WRONLY | O_CREAT | O_EXCL)
      .then(async (made) => {
        await made.chmod(NEW_MARKER_MODE);
        return made;
      })
      .catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
        return openMarker(folder, O_WRONLY);
      });
  } catch (error) {
    if (!(error instanceof MarkerFileError)) throw error;
    const where = relativePath === '.' ? MARKER : `${relativePath}/${MARKER}`;
    const what =
      error.problem === 'a symbolic link'
        ? 'a symbolic link, and the Scout does not write through links'
        : error.problem;
    throw conflict(`${where} is ${what}; remove it and save the job again`);
  }
  try {
    await handle.truncate(0);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
