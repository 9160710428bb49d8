import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { dropSpareBlocks, putFile } from '../../src/scout/upload/file-put.ts';

const dir = mkdtempSync(join(tmpdir(), 'backupd-file-put-'));
const file = join(dir, 'archive');
const content = Buffer.alloc(3 * 1024 * 1024 + 17);
for (let i = 0; i < content.length; i += 1) content[i] = (i * 7) % 251;
writeFileSync(file, content);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A server that answers each PUT with the SHA-256 of the body it received. */
const server = createServer((req, res) => {
  const hash = createHash('sha256');
  req.on('data', (part: Buffer) => hash.update(part));
  req.on('end', () => res.end(hash.digest('hex')));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`;
after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const upload = async () => {
  const res = await putFile(
    url,
    {},
    { file, offset: 0, length: content.length },
    AbortSignal.timeout(30_000),
  );
  return res.text();
};

test('the upload blocks kept after an upload are freed by dropSpareBlocks, and uploads go on after (issue #27)', async () => {
  dropSpareBlocks();
  assert.equal(await upload(), sha256(content));
  // An upload leaves its two 1 MiB blocks for the next; the Scout drops them after each operation.
  assert.equal(dropSpareBlocks(), 2);
  assert.equal(dropSpareBlocks(), 0);
  assert.equal(await upload(), sha256(content));
  assert.equal(dropSpareBlocks(), 2);
});
