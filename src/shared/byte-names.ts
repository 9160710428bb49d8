// A file name on Linux is bytes, not text. APIs and UIs show a name with every byte that is not
// part of valid UTF-8 written `\xHH` and a literal backslash as `\\`, and accept that form back
// (README, "Names are bytes"). The escape is lossless: unescapeName(escapeName(b)) equals b.
import { isUtf8 } from 'node:buffer';

const BACKSLASH = 0x5c;

/** Length of the UTF-8 sequence a lead byte starts, 0 for a byte that cannot start one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** The display form of a name's bytes; plain UTF-8 without backslashes comes back unchanged. */
export function escapeName(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buffer) && !buffer.includes(BACKSLASH)) return buffer.toString('utf8');
  let out = '';
  let at = 0;
  while (at < buffer.length) {
    const byte = buffer[at] as number;
    if (byte === BACKSLASH) {
      out += '\\\\';
      at += 1;
      continue;
    }
    const length = sequenceLength(byte);
    const sequence = length > 0 ? buffer.subarray(at, at + length) : null;
    if (sequence && sequence.length === length && isUtf8(sequence)) {
      out += sequence.toString('utf8');
      at += length;
    } else {
      out += `\\x${byte.toString(16).padStart(2, '0')}`;
      at += 1;
    }
  }
  return out;
}

/** The bytes an escaped name stands for; throws on a backslash that starts no escape. */
export function unescapeName(text: string): Buffer {
  if (!text.includes('\\')) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let plainFrom = 0;
  let at = 0;
  while (at < text.length) {
    if (text[at] !== '\\') {
      at += 1;
      continue;
    }
    parts.push(Buffer.from(text.slice(plainFrom, at), 'utf8'));
    if (text[at + 1] === '\\') {
      parts.push(Buffer.of(BACKSLASH));
      at += 2;
    } else if (text[at + 1] === 'x' && /^[0-9a-fA-F]{2}$/.test(text.slice(at + 2, at + 4))) {
      parts.push(Buffer.of(Number.parseInt(text.slice(at + 2, at + 4), 16)));
      at += 4;
    } else {
      throw new Error(`"\\" at ${at} starts no escape (write "\\\\" for a backslash, "\\xHH" for a byte)`);
    }
    plainFrom = at;
  }
  parts.push(Buffer.from(text.slice(plainFrom), 'utf8'));
  return Buffer.concat(parts);
}
