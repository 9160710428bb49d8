// The age ASCII armor (c2sp.org/age#ascii-armor), decoded as it streams: a
// "-----BEGIN AGE ENCRYPTED FILE-----" line, strict padded base64 in lines of exactly 64
// columns (the last one shorter, never empty), the END line; LF or CRLF line ends, and
// whitespace only before and after the whole armor. Anything else is refused, as age does.
import { AgeError } from './age-errors.ts';

const BEGIN = '-----BEGIN AGE ENCRYPTED FILE-----';
const END = '-----END AGE ENCRYPTED FILE-----';
const COLUMNS = 64;
/** The longest line worth keeping while it is incomplete: 64 columns and a CR. */
const MAX_LINE = COLUMNS + 1;

const isSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;

/** Whether a stream starting with `byte` is armored (a binary age file starts with "age"). */
export const startsArmor = (byte: number) => byte === 0x2d || isSpace(byte);

const fail = (problem: string) => new AgeError(`malformed age armor: ${problem}`, 'armor');

export class ArmorDecoder {
  #state: 'leading' | 'begin' | 'body' | 'end' | 'trailing' = 'leading';
  #line: Buffer = Buffer.alloc(0);

  /** The bytes decoded from `chunk`. */
  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.#state === 'leading' || this.#state === 'trailing') {
        while (at < chunk.length && isSpace(chunk[at] as number)) at += 1;
        if (at === chunk.length) break;
        if (this.#state === 'trailing') throw fail('data after the END line');
        this.#state = 'begin';
      }
      const newline = chunk.indexOf(0x0a, at);
      const end = newline < 0 ? chunk.length : newline;
      const piece = chunk.subarray(at, end);
      this.#line = this.#line.length === 0 ? piece : Buffer.concat([this.#line, piece]);
      if (this.#line.length > MAX_LINE) throw fail(`a line longer than ${COLUMNS} columns`);
      at = end;
      if (newline < 0) break;
      at += 1;
      const decoded = this.#finishLine();
      if (decoded) out.push(decoded);
    }
    return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
  }

  /** Checks that the armor ended properly (an END line without a line end is fine). */
  end(): void {
    if (this.#line.length > 0) this.#finishLine();
    if (this.#state !== 'trailing') throw fail('the END line is missing');
  }

  #finishLine(): Buffer | null {
    let text = this.#line.toString('latin1');
    this.#line = Buffer.alloc(0);
    if (text.endsWith('\r')) text = text.slice(0, -1);
    switch (this.#state) {
      case 'begin':
        if (text !== BEGIN) throw fail(`the first line must be ${BEGIN}`);
        this.#state = 'body';
        return null;
      case 'body':
      case 'end':
        if (text === END) {
          this.#state = 'trailing';
          return null;
        }
        if (this.#state === 'end') throw fail('a short line must be the last before the END line');
        return this.#dataLine(text);
      default:
        throw fail('unexpected line');
    }
  }

  #dataLine(text: string): Buffer {
    if (text.length === 0) throw fail('an empty line');
    if (text.length > COLUMNS) throw fail(`a line longer than ${COLUMNS} columns`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw fail('invalid base64');
    if (text.length < COLUMNS) this.#state = 'end';
    else if (text.includes('=')) throw fail('padding before the last line');
    const bytes = Buffer.from(text, 'base64');
    if (bytes.toString('base64') !== text) throw fail('non-canonical base64');
    return bytes;
  }
}
