/** Bech32 (BIP 173, not bech32m) as age uses it for `age1…` and `AGE-SECRET-KEY-1…`. */
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function polymod(values: number[]): number {
  let chk = 1;
  for (const value of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i += 1) if ((top >>> i) & 1) chk ^= GENERATORS[i] ?? 0;
  }
  return chk;
}

function hrpExpand(hrp: string): number[] {
  const codes = [...hrp].map((ch) => ch.charCodeAt(0));
  return [...codes.map((c) => c >>> 5), 0, ...codes.map((c) => c & 31)];
}

function convertBits(data: Uint8Array | number[], from: number, to: number, pad: boolean): number[] {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const max = (1 << to) - 1;
  for (const value of data) {
    acc = (acc << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >>> bits) & max);
    }
  }
  if (pad && bits > 0) out.push((acc << (to - bits)) & max);
  else if (!pad && (bits >= from || ((acc << (to - bits)) & max) !== 0))
    throw new Error('bech32: invalid padding');
  return out;
}

export function bech32Encode(hrp: string, data: Uint8Array): string {
  const lower = hrp.toLowerCase();
  const words = convertBits(data, 8, 5, true);
  const mod = polymod([...hrpExpand(lower), ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${lower}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`;
}

export function bech32Decode(text: string): { hrp: string; data: Uint8Array } {
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) throw new Error('bech32: mixed case');
  const lower = text.toLowerCase();
  const sep = lower.lastIndexOf('1');
  if (sep < 1 || sep + 7 > lower.length) throw new Error('bech32: no separator');
  const hrp = lower.slice(0, sep);
  if ([...hrp].some((ch) => ch.charCodeAt(0) < 33 || ch.charCodeAt(0) > 126))
    throw new Error('bech32: invalid prefix');
  const words = [...lower.slice(sep + 1)].map((ch) => {
    const index = CHARSET.indexOf(ch);
    if (index < 0) throw new Error('bech32: invalid character');
    return index;
  });
  if (polymod([...hrpExpand(hrp), ...words]) !== 1) throw new Error('bech32: bad checksum');
  return { hrp, data: Uint8Array.from(convertBits(words.slice(0, -6), 5, 8, false)) };
}
