/**
 * Memory that the kernel copies file and socket bytes into at full speed.
 *
 * A read (`read`, `pread`, `recv`) copies from the page cache or a socket buffer into the
 * caller's memory. On the x86 CPUs of our machines (AMD EPYC; `rep movsb` with FSRM), that copy
 * is about 5× slower when the destination is not aligned to 64 bytes: measured here, 645 MiB
 * read from the page cache in 1 MiB reads took 0.05 CPU-s into a page-aligned buffer and
 * 0.25–0.37 into the same buffer 16 bytes further (0.11 against 0.48 CPU-s per GiB received
 * over a loopback socket). Writes are not affected (the source's alignment does not matter).
 *
 * A `Buffer.allocUnsafeSlow` of a MiB is malloc's: a mapping of its own with malloc's 16-byte
 * header first, so every such buffer starts 16 bytes past a page boundary, the slow case. A
 * resizable ArrayBuffer is mapped by V8 itself, whole pages reserved for its maximum length, so
 * it starts on a page; it transfers to other threads like any ArrayBuffer, and `transfer(0)`
 * (release-memory.ts) frees it at once. Buffers that the kernel reads big runs of bytes into
 * (restore and upload blocks, download blocks) are made here. Not the archive's input blocks
 * (src/scout/archive/block-pool.ts): there the million-file backup's peak rose from 173 to
 * 202 MiB with them (first backup, fresh Scout, A/B), and the archive stage gained no CPU.
 */
export function alignedBuffer(bytes: number): Buffer {
  return Buffer.from(new ResizableArrayBuffer(bytes, { maxByteLength: bytes }));
}

/** ArrayBuffer with ES2024's options argument (the project's TypeScript library is older). */
const ResizableArrayBuffer = ArrayBuffer as unknown as new (
  bytes: number,
  options: { maxByteLength: number },
) => ArrayBuffer;
