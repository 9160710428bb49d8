// Folder trees on disk: building them from a description, and reading them back to compare.
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Builds a tree under `root`: keys ending in '/' are folders, values starting with '-> ' are
 * symlinks to the rest of the value, others file contents (null for an empty file).
 */
export function buildTree(root: string, tree: Record<string, string | Uint8Array | null>): string {
  for (const [path, value] of Object.entries(tree)) {
    const abs = join(root, path);
    if (path.endsWith('/')) mkdirSync(abs, { recursive: true });
    else {
      mkdirSync(join(abs, '..'), { recursive: true });
      if (typeof value === 'string' && value.startsWith('-> ')) symlinkSync(value.slice(3), abs);
      else writeFileSync(abs, value ?? '');
    }
  }
  return root;
}

export interface TreeNode {
  type: 'file' | 'dir' | 'symlink' | 'other';
  mode: number;
  mtime: number;
  content?: string;
  target?: string;
}

export interface TreeOptions {
  /** Record whole-second mtimes of files (and other non-folder, non-link entries); 0 otherwise. */
  withTimes?: boolean;
  /** Relative paths left out, with everything under them. */
  skip?: readonly string[];
}

/** Everything under `dir` (relative paths), with contents, link targets, modes and mtimes. */
export function tree(dir: string, options: TreeOptions = {}): Record<string, TreeNode> {
  const { withTimes = true, skip = [] } = options;
  const out: Record<string, TreeNode> = {};
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (skip.includes(r)) continue;
      const a = join(abs, name);
      const s = lstatSync(a);
      const node: TreeNode = {
        type: s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other',
        mode: s.isSymbolicLink() ? 0 : s.mode & 0o7777,
        mtime: withTimes && !s.isSymbolicLink() && !s.isDirectory() ? Math.floor(s.mtimeMs / 1000) : 0,
      };
      if (node.type === 'file') node.content = readFileSync(a).toString('base64');
      if (node.type === 'symlink') node.target = readlinkSync(a);
      out[r] = node;
      if (node.type === 'dir') walk(a, r);
    }
  };
  walk(dir, '');
  return out;
}

/** A job folder's tree as restored: everything but the `.upload_dir` marker. */
export const jobTree = (dir: string) => tree(dir, { skip: ['.upload_dir'] });

/** A scratch folder in the system temp dir, and a function that makes a new numbered folder in it. */
export function scratch(prefix: string): { work: string; fresh: (name: string) => string } {
  const work = mkdtempSync(join(tmpdir(), prefix));
  let counter = 0;
  const fresh = (name: string) => {
    counter += 1;
    const dir = join(work, `${name}-${counter}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  return { work, fresh };
}
