import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { ownsMemory, releaseNow } from '../../core/release-memory.ts';
import { ByteQueue } from '../restore/byte-queue.ts';
import { consumed, type PiecePool } from '../restore/piece-pool.ts';
import { ArmorDecoder, startsArmor } from './age-armor.ts';
import { AgeError } from './age-errors.ts';
import { publicKeyObject, type ScoutKey, x25519 } from './x25519.ts';

export { AgeError, type AgeFailure } from './age-errors.ts';

/**
 * The age v1 file format (age-encryption.org/v1) for X25519 recipients, on node:crypto:
 * a text header whose stanza wraps a random file key, then the STREAM payload —
 * ChaCha20-Poly1305 over 64 KiB chunks with a counter nonce whose last byte marks the
 * final chunk. Anything `age -d -i` reads, and the reverse. Here: the header of a new file
 * (newHeader) and the reader (createAgeDecrypt); a new file's payload is sealed by the
 * archive's sealing worker (seal-worker.ts with age-stream.ts), the one encryptor there is.
 */
const VERSION_LINE = 'age-encryption.org/v1';
const X25519_LABEL = 'age-encryption.org/v1/X25519';
export const CHUNK = 64 * 1024;
const TAG = 16;
/** Chunks in one output buffer when no pool gives the blocks. */
const FRESH_MAX = 16;

const b64 = (data: Uint8Array) => Buffer.from(data).toString('base64').replace(/=+$/, '');

/** Canonical unpadded base64 only, as the age spec demands of decoders. */
function strictB64(text: string, what: string): Buffer {
  const bytes = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/]*$/.test(text) || b64(bytes) !== text)
    throw new AgeError(`malformed base64 in the age ${what}`, 'header');
  return bytes;
}
const hkdf = (ikm: Uint8Array, salt: Uint8Array, info: string) =>
  Buffer.from(hkdfSync('sha256', ikm, salt, info, 32));

function seal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): Buffer {
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Uint8Array | KeyObject, nonce: Uint8Array, sealed: Uint8Array): Buffer {
  if (sealed.length < TAG) throw new AgeError('truncated age payload chunk', 'payload');
  const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
  try {
    const plain = decipher.update(sealed.subarray(0, sealed.length - TAG));
    const tail = decipher.final();
    return tail.length > 0 ? Buffer.concat([plain, tail]) : plain;
  } catch {
    throw new AgeError('decryption failed: wrong key or damaged archive', 'payload');
  }
}

/**
 * `open` into `out` at `at` (room for the chunk's plaintext is the caller's): the plaintext's
 * length, or null when the chunk does not authenticate under this nonce. node:crypto has no
 * update into a given buffer, so the piece it returns is copied and freed at once (detached),
 * never left to the garbage collector.
 */
function openInto(key: KeyObject, nonce: Uint8Array, sealed: Buffer, out: Buffer, at: number): number | null {
  if (sealed.length < TAG) throw new AgeError('truncated age payload chunk', 'payload');
  const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
  const plain = decipher.update(sealed.subarray(0, sealed.length - TAG));
  const length = plain.copy(out, at);
  if (ownsMemory(plain)) releaseNow(plain);
  if (length !== sealed.length - TAG) throw new Error('age: no room for a chunk in the output block');
  try {
    // ChaCha20-Poly1305 returns everything from update; final only checks the tag.
    if (decipher.final().length !== 0) throw new Error('unexpected output from final');
  } catch {
    return null;
  }
  return length;
}

function streamNonce(counter: number, last: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeUIntBE(counter, 5, 6);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

/** The header (with its MAC and the payload nonce) and payload key for a new file encrypted to `recipient`. */
export function newHeader(recipient: Uint8Array): { header: Buffer; payloadKey: Buffer; nonce: Buffer } {
  const fileKey = randomBytes(16);
  const ephemeral = generateKeyPairSync('x25519');
  const share = Buffer.from(ephemeral.publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: publicKeyObject(recipient) });
  const wrapKey = hkdf(shared, Buffer.concat([share, recipient]), X25519_LABEL);
  const body = seal(wrapKey, Buffer.alloc(12), fileKey);
  const head = `${VERSION_LINE}\n-> X25519 ${b64(share)}\n${b64(body)}\n---`;
  const mac = createHmac('sha256', hkdf(fileKey, Buffer.alloc(0), 'header'))
    .update(head)
    .digest();
  const nonce = randomBytes(16);
  return {
    header: Buffer.concat([Buffer.from(`${head} ${b64(mac)}\n`), nonce]),
    payloadKey: hkdf(fileKey, nonce, 'payload'),
    nonce,
  };
}

interface ParsedHeader {
  stanzas: { type: string; args: string[]; body: Buffer }[];
  /** The header text up to and including `---`, which the MAC covers. */
  macInput: string;
  mac: Buffer;
  /** Bytes of the input after the header line: the payload nonce and chunks. */
  length: number;
}

/** Parses the header from the start of `data`; null until the whole header is there. */
function parseHeader(data: Buffer): ParsedHeader | null {
  const end = data.indexOf('\n---');
  if (end < 0) return null;
  const lineEnd = data.indexOf('\n', end + 4);
  if (lineEnd < 0) return null;
  const text = data.subarray(0, lineEnd).toString('latin1');
  const lines = text.split('\n');
  if (lines[0] !== VERSION_LINE) throw new AgeError('not an age v1 file', 'header');
  const stanzas: ParsedHeader['stanzas'] = [];
  let i = 1;
  while (i < lines.length && lines[i]?.startsWith('-> ')) {
    const [type = '', ...args] = (lines[i] ?? '').slice(3).split(' ');
    // Each argument is one or more printable ASCII characters, separated by single spaces.
    if (![type, ...args].every((arg) => /^[\x21-\x7e]+$/.test(arg))) {
      throw new AgeError('malformed stanza arguments in the age header', 'header');
    }
    i += 1;
    const bodyLines: string[] = [];
    for (;;) {
      const line = lines[i] ?? '';
      i += 1;
      // Body lines wrap at exactly 64 columns; the first shorter line (maybe empty) ends it.
      if (line.length > 64) throw new AgeError('an age stanza body line is longer than 64 columns', 'header');
      bodyLines.push(line);
      if (line.length < 64) break;
    }
    stanzas.push({ type, args, body: strictB64(bodyLines.join(''), 'stanza body') });
  }
  const macLine = lines[i] ?? '';
  if (!macLine.startsWith('--- ')) throw new AgeError('malformed age header', 'header');
  const mac = strictB64(macLine.slice(4), 'header MAC');
  if (mac.length !== 32) throw new AgeError('malformed age header MAC', 'header');
  return {
    stanzas,
    macInput: `${lines.slice(0, i).join('\n')}\n---`,
    mac,
    length: lineEnd + 1,
  };
}

function unwrapFileKey(header: ParsedHeader, identities: ScoutKey[]): Buffer {
  for (const stanza of header.stanzas) {
    if (stanza.type !== 'X25519') continue;
    const share = strictB64(stanza.args[0] ?? '', 'X25519 share');
    if (stanza.args.length !== 1 || share.length !== 32 || stanza.body.length !== 32) {
      throw new AgeError('malformed X25519 stanza in the age header', 'header');
    }
    for (const identity of identities) {
      let shared: Buffer;
      try {
        shared = x25519(identity.secret, share);
      } catch {
        throw new AgeError('invalid X25519 share in the age header', 'header');
      }
      const wrapKey = hkdf(shared, Buffer.concat([share, identity.publicKey]), X25519_LABEL);
      let fileKey: Buffer;
      try {
        fileKey = open(wrapKey, Buffer.alloc(12), stanza.body);
      } catch {
        continue;
      }
      const mac = createHmac('sha256', hkdf(fileKey, Buffer.alloc(0), 'header'))
        .update(header.macInput)
        .digest();
      if (mac.length !== header.mac.length || !timingSafeEqual(mac, header.mac)) {
        throw new AgeError('age header MAC mismatch: the archive was altered', 'hmac');
      }
      return fileKey;
    }
  }
  throw new AgeError('no key matches this archive: it was encrypted to another Scout key', 'no_match');
}

/**
 * The header of a binary age file at the start of `head` (with the payload nonce after it):
 * its length and the payload key, once `head` holds all of it (null before; `final`: no more
 * bytes come). Throws an AgeError for a malformed header or one no identity opens.
 */
export function readAgeHeader(
  head: Buffer,
  identities: ScoutKey[],
  final: boolean,
): { payloadKey: Buffer; length: number } | null {
  const header = parseHeader(head);
  if (!header) {
    if (final || head.length > 1024 * 1024) throw new AgeError('truncated or malformed age header', 'header');
    return null;
  }
  if (head.length < header.length + 16 && !final) return null;
  const fileKey = unwrapFileKey(header, identities);
  const nonce = head.subarray(header.length, header.length + 16);
  if (nonce.length < 16) throw new AgeError('truncated age header: the payload nonce is missing', 'header');
  return { payloadKey: hkdf(fileKey, nonce, 'payload'), length: header.length + 16 };
}

/**
 * Decrypts an age stream with the first of `identities` that opens it. `armor`: whether the
 * input is ASCII-armored (`age -a`); by default its first byte tells. `output`: blocks to
 * decrypt into (each a multiple of 64 KiB), handed on and given back by the consumer
 * (piece-pool.ts); without it each push is a new buffer. Input pieces
 * from a pool go back to it once their last byte was decrypted.
 */
export function createAgeDecrypt(
  identities: ScoutKey[],
  options: { armor?: boolean | 'auto'; output?: PiecePool } = {},
): Transform {
  const mode = options.armor ?? 'auto';
  /** Undefined until the first byte decided; null for a binary file. */
  let armor: ArmorDecoder | null | undefined = mode === 'auto' ? undefined : mode ? new ArmorDecoder() : null;
  /** The input until the header is read; then the payload's bytes go to `payload`. */
  let head: Buffer = Buffer.alloc(0);
  /**
   * Input chunks read to their end, given back to their pool (piece-pool.ts) only when a
   * transform call is over: a piece taken last is still being opened, and a block given back
   * may at once be read into again (on the thread pool).
   */
  const used: Buffer[] = [];
  const payload = new ByteQueue({ onUsed: (chunk) => used.push(chunk) });
  const giveBackUsed = () => {
    for (const chunk of used.splice(0)) consumed(chunk);
  };
  /** One key object for every chunk: a raw key was imported again per 64 KiB chunk (~25 % of a restore's decryption). */
  let payloadKey: KeyObject | null = null;
  let counter = 0;
  let sawLast = false;
  const sealedChunk = CHUNK + TAG;
  /** A sealed chunk that spans two input pieces is copied here (used only while it opens). */
  let spanning: Buffer | null = null;
  const pool = options.output;
  if (pool && (pool.size < CHUNK || pool.size % CHUNK !== 0)) {
    throw new Error('age output blocks must be a multiple of 64 KiB');
  }

  /** A block to open chunks into (one was just taken): the pool's, or one just big enough for what is there. */
  const newBlock = (): Buffer =>
    pool
      ? pool.take()
      : Buffer.allocUnsafeSlow(Math.min(FRESH_MAX, 1 + Math.ceil(payload.length / sealedChunk)) * CHUNK);
  const handOn = (block: Buffer, length: number): Buffer =>
    pool ? pool.handOn(block, length) : block.subarray(0, length);
  const giveBack = (block: Buffer): void => pool?.give(block);

  /**
   * Opens every whole chunk there is into blocks (no buffer per chunk, no joining), each
   * pushed once full and at the end.
   */
  function drainInto(key: KeyObject, push: (b: Buffer) => void, final: boolean): void {
    let block: Buffer | null = null;
    let filled = 0;
    try {
      while (payload.length >= sealedChunk || (final && payload.length > 0)) {
        if (sawLast) throw new AgeError('data after the final age chunk', 'payload');
        const take = Math.min(sealedChunk, payload.length);
        spanning ??= Buffer.allocUnsafeSlow(sealedChunk);
        const piece = payload.take(take, spanning);
        if (block && filled + CHUNK > block.length) {
          push(handOn(block, filled));
          block = null;
        }
        if (!block) {
          block = newBlock();
          filled = 0;
        }
        let length: number | null = null;
        if (take === sealedChunk) length = openInto(key, streamNonce(counter, false), piece, block, filled);
        if (length === null) {
          length = openInto(key, streamNonce(counter, true), piece, block, filled);
          if (length === null)
            throw new AgeError('decryption failed: wrong key or damaged archive', 'payload');
          if (length === 0 && counter > 0) throw new AgeError('empty final age chunk', 'payload');
          sawLast = true;
        }
        filled += length;
        counter += 1;
      }
    } finally {
      // What opened before a failure is still released.
      if (block && filled > 0) push(handOn(block, filled));
      else if (block) giveBack(block);
    }
  }

  function drain(push: (b: Buffer) => void, final: boolean): void {
    if (!payloadKey) {
      const header = readAgeHeader(head, identities, final);
      if (!header) return;
      payloadKey = createSecretKey(header.payloadKey);
      payload.push(head.subarray(header.length));
      head = Buffer.alloc(0);
    }
    // A full sealed chunk opens either as a middle chunk or as the last one (the nonce says
    // which); a shorter one can only be the last and waits for the end of the input. Every
    // chunk that opens is released at once, as age does — the chunks opened from one input
    // piece together, so the stages after this one get few large writes.
    drainInto(payloadKey, push, final);
    if (final && !sawLast) throw new AgeError('truncated age payload: the final chunk is missing', 'payload');
  }

  return new Transform({
    transform(input: Buffer, _encoding, done: TransformCallback) {
      try {
        if (armor === undefined && input.length > 0) {
          armor = startsArmor(input[0] as number) ? new ArmorDecoder() : null;
        }
        const chunk = armor ? armor.push(input) : input;
        if (payloadKey) payload.push(chunk);
        else head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
        // Wait for more than a whole sealed chunk: only then is it surely not the last one.
        if (!payloadKey || payload.length > sealedChunk) drain((b) => this.push(b), false);
        giveBackUsed();
        done();
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done: TransformCallback) {
      try {
        armor?.end();
        drain((b) => this.push(b), true);
        giveBackUsed();
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
}
