/**
 * Memory freed now instead of at some later garbage collection: a Buffer's ArrayBuffer
 * transferred to length 0 (detached), which returns its bytes to the allocator at once. The
 * data paths make thousands of short-lived buffers per GiB (socket reads, zstd output, sealed
 * pieces) that nothing else views; waiting for the collector held tens of MiB of them, and an
 * idle process runs no collection at all.
 */
type Transferable = ArrayBuffer & { transfer(length: number): ArrayBuffer };

/** Whether `bytes` is the whole of its own ArrayBuffer (so nothing else can view it). */
export const ownsMemory = (bytes: Buffer): boolean =>
  bytes.byteOffset === 0 && bytes.length === bytes.buffer.byteLength;

/** Frees `bytes`' memory now (detaching it); only for a buffer nothing else still views. */
export const releaseNow = (bytes: Buffer): void => {
  (bytes.buffer as Transferable).transfer(0);
};
