/** Size of one write batch: the unit of the Station's writes to a staged file. */
export const BLOCK_BYTES = 2 * 1024 * 1024;
/**
 * Direct writes (O_DIRECT) need the memory, the file offset and the length aligned to the
 * device's logical block size: 512 or 4096 bytes; 4096 fits both.
 */
export const DIRECT_ALIGN = 4096;
/** Blocks per region: one region is 16 MiB of memory. */
const REGION_BLOCKS = 8;
/** At most this many blocks (32 MiB) are lent at once; a write beyond takes fresh memory. */
const MAX_BLOCKS = 16;
/**
 * The size of a block of fresh memory past the pool (more than 8 chunks written at once): small,
 * so 20 parallel uploads do not hold 2 MiB each of memory the allocator keeps afterwards.
 */
const FRESH_BLOCK_BYTES = 256 * 1024;
const WASM_PAGE = 64 * 1024;

/** A block of memory to fill and write; `aligned` when its address suits direct writes. */
export interface BatchBlock {
  bytes: Buffer;
  aligned: boolean;
}

/** The global WebAssembly object (Node's type definitions declare only its types). */
const wasm = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (size: { initial: number; maximum: number }) => { buffer: ArrayBuffer } };
  }
).WebAssembly;

const free: BatchBlock[] = [];
let made = 0;

/** A region of page-aligned memory (a WebAssembly memory is mapped whole pages), cut in blocks. */
function newRegion(): void {
  const memory = new wasm.Memory({
    initial: (REGION_BLOCKS * BLOCK_BYTES) / WASM_PAGE,
    maximum: (REGION_BLOCKS * BLOCK_BYTES) / WASM_PAGE,
  });
  for (let i = 0; i < REGION_BLOCKS; i += 1) {
    free.push({ bytes: Buffer.from(memory.buffer, i * BLOCK_BYTES, BLOCK_BYTES), aligned: true });
  }
  made += REGION_BLOCKS;
}

/**
 * The Station's write batches reuse a fixed pool of page-aligned blocks (issue #27: reuse,
 * don't allocate): a staged file's bytes are copied from each socket read into a block and
 * written from it, so the only memory that comes and goes per upload is Node's own per-read
 * buffer. The pool grows by regions up to MAX_BLOCKS and never shrinks (its pages stay the
 * process's, as the two fresh 2 MiB buffers per chunk they replace would while the GC let them
 * live); a writer beyond that takes small blocks of plain memory and writes through the page cache.
 */
export function takeBlock(): BatchBlock {
  if (free.length === 0 && made < MAX_BLOCKS) newRegion();
  return free.pop() ?? { bytes: Buffer.allocUnsafeSlow(FRESH_BLOCK_BYTES), aligned: false };
}

/** Gives a block back once nothing reads or writes it any more. */
export function returnBlock(block: BatchBlock): void {
  if (block.aligned) free.push(block);
}
