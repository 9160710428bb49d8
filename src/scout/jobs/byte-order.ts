// Byte-wise ordering of names and paths, the order tar and the fingerprint use.
//
// Text (UTF-8) names: JavaScript compares UTF-16 code units, which agrees with UTF-8 byte
// order except when a surrogate pair meets a character in U+E000–U+FFFF; only then do we pay
// for Buffers.
//
// Names as read from the disk are bytes (they need not be UTF-8). The walk carries them as
// byte strings: one character per byte (Node's 'latin1' encoding, which maps each byte to
// the character of the same number and back, losslessly). Comparing two byte strings with
// `<` is exactly byte order, concatenating them is cheap, and they cost a byte per byte.

const SURROGATE = /[\uD800-\uDFFF]/;

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareBytes(a: string, b: string): number {
  if (SURROGATE.test(a) || SURROGATE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return compareCodeUnits(a, b);
}

/** A name's exact bytes, one character per byte (see above). */
export type ByteString = string;

/** The byte string of some bytes. */
export const byteString = (bytes: Uint8Array): ByteString =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

/** The byte string of a text's UTF-8 encoding (plain ASCII comes back unchanged). */
export const utf8ByteString = (text: string): ByteString =>
  Buffer.byteLength(text, 'utf8') === text.length ? text : Buffer.from(text, 'utf8').toString('latin1');

/** The bytes a byte string stands for. */
export const bytesOf = (value: ByteString): Buffer => Buffer.from(value, 'latin1');

/** Sorts byte strings in place in byte order and returns the array. */
export const sortByteStrings = (values: ByteString[]): ByteString[] => values.sort(compareCodeUnits);

/** Sorts items in place by a byte string of each (in byte order) and returns the array. */
export const sortByByteString = <T>(values: T[], key: (value: T) => ByteString): T[] =>
  values.sort((a, b) => compareCodeUnits(key(a), key(b)));
