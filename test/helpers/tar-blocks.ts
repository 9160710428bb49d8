// Hand-made ustar blocks for the tests of the tar reader and the restore path.
const BLOCK = 512;

/** A ustar header block; `size` is the raw 12-byte field when given as a Buffer. */
export function tarHeader(name: string, type: string, size: number | Buffer): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write('0000644\0', 100, 'ascii');
  block.write('0000000\0', 108, 'ascii');
  block.write('0000000\0', 116, 'ascii');
  if (typeof size === 'number') block.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  else size.copy(block, 124, 0, 12);
  block.write('14712345670\0', 136, 'ascii');
  block.write(type, 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** Zeros up to the next 512-byte boundary after `size` bytes of data. */
export const tarPadding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** A regular file's entry: header, data, padding. */
export function tarFile(name: string, content: Buffer): Buffer {
  return Buffer.concat([tarHeader(name, '0', content.length), content, tarPadding(content.length)]);
}
