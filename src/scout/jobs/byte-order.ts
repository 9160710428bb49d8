// Byte-wise (UTF-8) ordering of names and paths, the order tar and the fingerprint use.
// JavaScript compares UTF-16 code units, which agrees with UTF-8 byte order except when a
// surrogate pair meets a character in U+E000–U+FFFF; only then do we pay for Buffers.

const SURROGATE = /[\uD800-\uDFFF]/;

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareBytes(a: string, b: string): number {
  if (SURROGATE.test(a) || SURROGATE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return compareCodeUnits(a, b);
}

/** Sorts in place by UTF-8 bytes and returns the array. */
export function sortBytewise(values: string[]): string[] {
  if (!values.some((value) => SURROGATE.test(value))) return values.sort(compareCodeUnits);
  const keyed = values.map((value) => ({ value, bytes: Buffer.from(value) }));
  keyed.sort((x, y) => Buffer.compare(x.bytes, y.bytes));
  for (let i = 0; i < keyed.length; i++) values[i] = (keyed[i] as { value: string }).value;
  return values;
}
