// Folder trees compared byte for byte: names as bytes (shown escaped, src/shared/byte-names.ts),
// contents, link targets, modes, owners, mtimes and which entries share an inode.
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { escapeName } from '../../src/shared/byte-names.ts';
import { sha256 } from './hashes.ts';

export interface ByteTreeNode {
  type: 'file' | 'dir' | 'symlink' | 'other';
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  sha256?: string;
  target?: string;
  /** The first path (in walk order) with the same inode, for the second and later links of a file. */
  linkOf?: string;
}

/** Everything under `dir`, keyed by escaped relative path. */
export function byteTree(dir: string): Record<string, ByteTreeNode> {
  const out: Record<string, ByteTreeNode> = {};
  const inodes = new Map<string, string>();
  const walk = (abs: Buffer, rel: Buffer | null) => {
    const names = readdirSync(abs, { encoding: 'buffer' }).sort(Buffer.compare);
    for (const name of names) {
      const r = rel ? Buffer.concat([rel, Buffer.from('/'), name]) : name;
      const a = Buffer.concat([abs, Buffer.from('/'), name]);
      const s = lstatSync(a);
      const key = escapeName(r);
      const node: ByteTreeNode = {
        type: s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other',
        mode: s.isSymbolicLink() ? 0 : s.mode & 0o7777,
        uid: s.uid,
        gid: s.gid,
        mtime: s.isSymbolicLink() || s.isDirectory() ? 0 : Math.floor(s.mtimeMs / 1000),
      };
      if (node.type === 'file') {
        node.sha256 = sha256(readFileSync(a));
        const inode = `${s.dev}:${s.ino}`;
        const first = inodes.get(inode);
        if (first !== undefined) node.linkOf = first;
        else inodes.set(inode, key);
      }
      if (node.type === 'symlink') node.target = escapeName(readlinkSync(a, { encoding: 'buffer' }));
      out[key] = node;
      if (node.type === 'dir') walk(a, r);
    }
  };
  walk(Buffer.from(dir), null);
  return out;
}
