const NEWLINE = Buffer.from('\n');

/**
 * One pax extended header record: "<len> <key>=<value>\n", where len counts the whole record in
 * bytes. `key` is a byte string (one character per byte, src/scout/jobs/byte-order.ts); the
 * value is bytes, or text written as UTF-8.
 */
export function paxRecord(key: string, value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  const bodyLength = key.length + bytes.length + 3; // " " key "=" value "\n"
  let length = bodyLength + String(bodyLength).length;
  if (String(length).length !== String(bodyLength).length) length += 1;
  return Buffer.concat([Buffer.from(`${length} ${key}=`, 'latin1'), bytes, NEWLINE]);
}
