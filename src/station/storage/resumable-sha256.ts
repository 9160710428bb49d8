/**
 * SHA-256 (FIPS 180-4) whose state can be saved as text and resumed by another process: an
 * upload staged in a bucket is hashed while its bytes arrive, on whichever Station receives
 * each chunk. Node's crypto cannot export a hash state. hash-wasm can, but the Station keeps
 * WebAssembly on V8's baseline compiler for PGlite's sake (`src/core/wasm-baseline.ts`), and there
 * hash-wasm's SHA-256 ran at 8–20 MiB/s. Compiled with the optimising compiler before those
 * flags are set (`--no-liftoff --no-wasm-lazy-compilation`, then the baseline flags) it stays
 * optimised, also once PGlite is loaded, but still ran slower than this plain TypeScript:
 * 141–183 against 175–217 MiB/s per CPU-second, alternating on a loaded machine (unloaded this
 * runs at ~240; OpenSSL without SHA-NI ~340 MB/s, with it ~1.5 GiB/s). It is most of a
 * Station's CPU on S3 (bench/s3.ts: 8.4–9.1 CPU-s per GiB, ~1.7 with the hash skipped); run
 * on a thread of its own it cost more CPU and memory and gained no time on two cores (tried).
 * Tested against node:crypto on random lengths and splits.
 */

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];
/** Saved state: version byte, 8 state words, the byte count (8 bytes), the pending < 64 bytes. */
const VERSION = 1;

/** Runs the compression function over the 64-byte blocks of data[start, end). */
type Compress = (h: Int32Array, data: DataView, start: number, end: number) => void;

const rotr = (x: string, n: number) => `((${x} >>> ${n}) | (${x} << ${32 - n}))`;

/**
 * The compression function as straight-line code, built once from FIPS 180-4's description:
 * 64 rounds with the eight working variables renamed from round to round instead of shifted,
 * the message schedule in 16 locals, big-endian words read through a DataView. V8 compiles
 * this to 235 MiB/s per CPU-second on this machine, against 155 for the same rounds as a
 * loop over typed arrays (the upload's hash is most of a Station's CPU on S3: bench/s3.ts).
 * The text is built from constants only.
 */
function buildCompress(): Compress {
  const v = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'k'];
  const w = (i: number) => `w${i % 16}`;
  const lines = [
    `let ${v.map((name, i) => `${name}0 = h[${i}] | 0`).join(', ')};`,
    'for (let p = start; p < end; p += 64) {',
    `  let ${Array.from({ length: 16 }, (_, i) => `w${i} = data.getInt32(p + ${i * 4})`).join(', ')};`,
    `  let ${v.map((name) => `${name} = ${name}0`).join(', ')};`,
  ];
  for (let i = 0; i < 64; i += 1) {
    const [a, b, c, d, e, f, g, h] = v.map((_, j) => v[(j - i + 64) % 8] as string);
    if (i >= 16) {
      const s0 = `(${rotr(w(i - 15), 7)} ^ ${rotr(w(i - 15), 18)} ^ (${w(i - 15)} >>> 3))`;
      const s1 = `(${rotr(w(i - 2), 17)} ^ ${rotr(w(i - 2), 19)} ^ (${w(i - 2)} >>> 10))`;
      lines.push(`  ${w(i)} = (${w(i)} + ${s0} + ${w(i - 7)} + ${s1}) | 0;`);
    }
    const sum1 = `(${rotr(e as string, 6)} ^ ${rotr(e as string, 11)} ^ ${rotr(e as string, 25)})`;
    const sum0 = `(${rotr(a as string, 2)} ^ ${rotr(a as string, 13)} ^ ${rotr(a as string, 22)})`;
    lines.push(`  ${h} = (${h} + ${sum1} + (${g} ^ (${e} & (${f} ^ ${g}))) + ${K[i]} + ${w(i)}) | 0;`);
    lines.push(`  ${d} = (${d} + ${h}) | 0;`);
    lines.push(`  ${h} = (${h} + ${sum0} + ((${a} & ${b}) | (${c} & (${a} | ${b})))) | 0;`);
  }
  lines.push(`  ${v.map((name) => `${name}0 = (${name}0 + ${name}) | 0;`).join(' ')}`, '}');
  lines.push(v.map((name, i) => `h[${i}] = ${name}0;`).join(' '));
  return new Function('h', 'data', 'start', 'end', lines.join('\n')) as Compress;
}

const compressView = buildCompress();

function compress(h: Int32Array, data: Uint8Array, start: number, end: number): void {
  if (end > start) compressView(h, new DataView(data.buffer, data.byteOffset, data.byteLength), start, end);
}

export class ResumableSha256 {
  private readonly h = Int32Array.from(INITIAL);
  private readonly pending = Buffer.alloc(64);
  private pendingLength = 0;
  private length = 0;

  /** A hash continuing from `save()`'s text (a fresh one without it). */
  static resume(saved?: string): ResumableSha256 {
    const hash = new ResumableSha256();
    if (saved === undefined) return hash;
    const bytes = Buffer.from(saved, 'base64');
    if (bytes[0] !== VERSION || bytes.length < 41 || bytes.length > 41 + 63) {
      throw new Error('not a saved SHA-256 state');
    }
    for (let i = 0; i < 8; i += 1) hash.h[i] = bytes.readInt32BE(1 + i * 4);
    hash.length = Number(bytes.readBigUInt64BE(33));
    hash.pendingLength = bytes.length - 41;
    hash.pending.set(bytes.subarray(41));
    if (hash.length % 64 !== hash.pendingLength) throw new Error('not a saved SHA-256 state');
    return hash;
  }

  /** Bytes hashed so far. */
  get bytes(): number {
    return this.length;
  }

  update(data: Uint8Array): this {
    let at = 0;
    this.length += data.length;
    if (this.pendingLength > 0) {
      at = Math.min(64 - this.pendingLength, data.length);
      this.pending.set(data.subarray(0, at), this.pendingLength);
      this.pendingLength += at;
      if (this.pendingLength < 64) return this;
      compress(this.h, this.pending, 0, 64);
      this.pendingLength = 0;
    }
    const whole = at + Math.floor((data.length - at) / 64) * 64;
    compress(this.h, data, at, whole);
    this.pending.set(data.subarray(whole));
    this.pendingLength = data.length - whole;
    return this;
  }

  save(): string {
    const bytes = Buffer.alloc(41 + this.pendingLength);
    bytes[0] = VERSION;
    for (let i = 0; i < 8; i += 1) bytes.writeInt32BE(this.h[i] as number, 1 + i * 4);
    bytes.writeBigUInt64BE(BigInt(this.length), 33);
    bytes.set(this.pending.subarray(0, this.pendingLength), 41);
    return bytes.toString('base64');
  }

  /** The hex digest of what was hashed; the hash itself is left as it was. */
  digest(): string {
    const copy = ResumableSha256.resume(this.save());
    const tail = Buffer.alloc(this.pendingLength < 56 ? 64 : 128);
    tail.set(this.pending.subarray(0, this.pendingLength));
    tail[this.pendingLength] = 0x80;
    tail.writeBigUInt64BE(BigInt(this.length) * 8n, tail.length - 8);
    compress(copy.h, tail, 0, tail.length);
    const out = Buffer.alloc(32);
    for (let i = 0; i < 8; i += 1) out.writeInt32BE(copy.h[i] as number, i * 4);
    return out.toString('hex');
  }
}
