/** The STREAM sealer's two operations; see `ageStreamSealer`. */
export interface StreamSealer {
  /**
   * The sealed chunks that `data` completes (possibly none: an empty buffer), in an output
   * buffer the sealer keeps and reuses: valid until the next call.
   */
  push(data: Buffer): Buffer;
  /** The final chunk (the last flag set): what is left, at most 64 KiB, maybe empty. */
  end(): Buffer;
}

/**
 * age's STREAM payload encryption (ChaCha20-Poly1305 over 64 KiB chunks, a big-endian
 * counter nonce whose last byte marks the final chunk) for a writer that hands over large
 * pieces: each `push` seals every complete chunk it can — keeping at least one byte back for
 * the final chunk — into one output buffer, reading the input as slices; only a chunk that
 * spans two pieces is copied. The output buffer is allocated once (grown to the biggest push)
 * and reused, not allocated per push.
 *
 * Self-contained on purpose (no names from outside the function): the archive's sealing
 * worker runs this very function from its source text (seal-worker.ts).
 */
export function ageStreamSealer(payloadKey: Buffer): StreamSealer {
  const { createCipheriv, createSecretKey } = process.getBuiltinModule('node:crypto');
  // One key object for every chunk: a raw key would be imported again per chunk.
  const key = createSecretKey(payloadKey);
  const chunk = 64 * 1024;
  const tag = 16;
  const carry = Buffer.allocUnsafe(chunk);
  const nonce = Buffer.alloc(12);
  let carryLength = 0;
  let counter = 0;
  let output: Buffer | null = null;

  function sealInto(out: Buffer, offset: number, plain: Buffer, last: boolean): void {
    nonce.writeUIntBE(counter, 5, 6);
    nonce[11] = last ? 1 : 0;
    const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: tag });
    const sealed = cipher.update(plain);
    let at = offset + sealed.copy(out, offset);
    // Free the piece now rather than at the next garbage collection: a backup seals ~10,000
    // of them per GiB, and waiting for the collector held tens of MiB.
    if (sealed.byteOffset === 0 && sealed.length === sealed.buffer.byteLength) {
      (sealed.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
    }
    at += cipher.final().copy(out, at);
    cipher.getAuthTag().copy(out, at);
    counter += 1;
  }

  return {
    push(data: Buffer): Buffer {
      const total = carryLength + data.length;
      const chunks = total > 0 ? Math.floor((total - 1) / chunk) : 0;
      const size = chunks * (chunk + tag);
      if (output === null || output.length < size) {
        (output?.buffer as (ArrayBuffer & { transfer(length: number): ArrayBuffer }) | undefined)?.transfer(
          0,
        );
        output = Buffer.allocUnsafeSlow(size);
      }
      const out = output.subarray(0, size);
      let at = 0;
      for (let i = 0; i < chunks; i += 1) {
        let plain: Buffer;
        if (carryLength > 0) {
          const take = chunk - carryLength;
          data.copy(carry, carryLength, at, at + take);
          at += take;
          carryLength = 0;
          plain = carry;
        } else {
          plain = data.subarray(at, at + chunk);
          at += chunk;
        }
        sealInto(out, i * (chunk + tag), plain, false);
      }
      carryLength += data.copy(carry, carryLength, at);
      return out;
    },
    end(): Buffer {
      const out = Buffer.allocUnsafe(carryLength + tag);
      sealInto(out, 0, carry.subarray(0, carryLength), true);
      carryLength = 0;
      return out;
    },
  };
}
