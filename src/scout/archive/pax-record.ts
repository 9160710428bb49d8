const NEWLINE = Buffer.from('\n');

/**
 * One pax extended header record: "<len> <key>=<value>\n", where len counts the whole record in
 * bytes. `key` is a byte string (one character per byte, src/scout/jobs/byte-order.ts); the
 * value is bytes, or text written as UTF-8.
 */
export function paxRecord(key: string, value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([Buffer.from(`${recordLength(key, bytes.length)} ${key}=`, 'latin1'), bytes, NEWLINE]);
}

/** The same record as text, for a key and value of printable ASCII (one byte per character). */
export function paxAsciiRecord(key: string, value: string): string {
  return `${recordLength(key, value.length)} ${key}=${value}\n`;
}

/** The length of a record, which counts the digits of the length itself. */
function recordLength(key: string, valueLength: number): number {
  const bodyLength = key.length + valueLength + 3; // " " key "=" value "\n"
  const length = bodyLength + String(bodyLength).length;
  return String(length).length !== String(bodyLength).length ? length + 1 : length;
}
