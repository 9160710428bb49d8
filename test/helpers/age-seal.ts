// Encryption to an age recipient by the code the Scout ships: the archive's sealing worker
// (src/scout/archive/seal-worker.ts, with the header from newHeader in age.ts), fed the bytes
// as the zstd workers feed it frames. Tests encrypt with this, so what they prove of the
// encryption (age reads it, the chunking at every size) holds for real archives.
import { open } from 'node:fs/promises';
import { MessageChannel } from 'node:worker_threads';
import { newHeader } from '../../src/scout/archive/age.ts';
import { SealWorker } from '../../src/scout/archive/seal-worker.ts';

/** Encrypts the pieces of `source`, in order, to `recipient` into the file `path`. */
export async function sealFile(
  recipient: Uint8Array,
  source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  path: string,
): Promise<{ size: number; sha256: string }> {
  const { header, payloadKey } = newHeader(recipient);
  const channel = new MessageChannel();
  const file = await open(path, 'w');
  let failure: Error | null = null;
  const sealer = new SealWorker({
    fd: file.fd,
    header,
    payloadKey,
    frames: [channel.port2],
    onSealed: () => {},
    onFailure: (error) => {
      failure ??= error;
    },
  });
  try {
    let id = 0;
    for await (const piece of source) {
      if (failure) throw failure;
      const output = new ArrayBuffer(piece.length);
      new Uint8Array(output).set(piece);
      const input = new ArrayBuffer(0);
      channel.port1.postMessage({ id, input, output, length: piece.length }, [input, output]);
      id += 1;
    }
    return await sealer.end(id);
  } finally {
    await sealer.close();
    await file.close();
    channel.port1.close();
  }
}
