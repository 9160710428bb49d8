// What more than one bench needs: a file of random bytes and an upload of it through a Station.
import { createHash, randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { archiveMeta, call, finalize, initiate } from '../test/helpers/uploads.ts';

const MIB = 1024 * 1024;

/** Writes `bytes` random bytes to `path` in 8 MiB blocks; returns their SHA-256. */
export function makeRandomFile(path: string, bytes: number): string {
  const hash = createHash('sha256');
  writeFileSync(path, '');
  for (let done = 0; done < bytes; done += 8 * MIB) {
    const chunk = randomBytes(Math.min(8 * MIB, bytes - done));
    hash.update(chunk);
    writeFileSync(path, chunk, { flag: 'a' });
  }
  return hash.digest('hex');
}

/** Uploads a file as a Scout does: chunks of the recommended size, one chunk in memory. */
export async function uploadFile(url: string, token: string, path: string, sha: string, instance: string) {
  const size = statSync(path).size;
  const meta = archiveMeta(Buffer.alloc(0), {
    scout_instance_id: instance,
    archive_size_bytes: size,
    archive_sha256: sha,
  });
  const started = await initiate(url, token, meta);
  if (started.status !== 200) throw new Error(`initiate: ${JSON.stringify(started.body)}`);
  const chunkSize: number = started.body.recommended_chunk_size_bytes;
  const file = await open(path, 'r');
  try {
    let offset = 0;
    const buffer = Buffer.alloc(chunkSize);
    while (offset < size) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(chunkSize, size - offset), offset);
      const path = `/backup/uploads/${started.body.upload_id}/chunk?offset=${offset}`;
      const reply = await call(url, 'PUT', path, token, buffer.subarray(0, bytesRead));
      if (reply.status !== 200) throw new Error(`chunk: ${JSON.stringify(reply.body)}`);
      offset = reply.body.next_offset;
    }
  } finally {
    await file.close();
  }
  const done = await finalize(url, token, started.body.upload_id);
  if (done.status !== 200) throw new Error(`finalize: ${JSON.stringify(done.body)}`);
  return { scoutId: meta.scout_id, filename: String(done.body.stored_as ?? done.body.filename) };
}
