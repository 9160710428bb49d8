// Entry names inside the restorer are byte strings: one character per byte (latin1), so that
// splitting at '/', sets and maps work on them as on text and no byte of a name that is not
// UTF-8 is lost. They turn back into bytes only at the file system (`fsPath`) and are shown
// with the lossless escape of src/shared/byte-names.ts.
import { escapeName } from '../../shared/byte-names.ts';
import { bytesOf } from '../jobs/byte-order.ts';

// The walk's byte strings are the same kind: one pair of conversions for backup and restore.
export { byteString, bytesOf } from '../jobs/byte-order.ts';

/** A byte string as APIs, problems and the CLI show it (`\xHH` for bytes that are not UTF-8). */
export const shown = (name: string): string => escapeName(bytesOf(name));

const ASCII = /^[\x20-\x7e]*$/;

/**
 * `prefix` (a path as text: the destination, or /proc/self/fd/N) joined with the byte string
 * `name`, for the fs calls: plain text when the name is ASCII (the same bytes either way), else
 * the exact bytes.
 */
export function fsPath(prefix: string, name: string): string | Buffer {
  const base = prefix.endsWith('/') ? prefix : `${prefix}/`;
  if (name === '') return prefix;
  if (ASCII.test(name)) return `${base}${name}`;
  return Buffer.concat([Buffer.from(base, 'utf8'), bytesOf(name)]);
}
