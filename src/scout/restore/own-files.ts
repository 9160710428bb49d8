import type { Stats } from 'node:fs';

/**
 * The files a restore wrote (or found already right): the only targets a hard link entry may
 * have. A dry run writes nothing and remembers paths; a restore remembers inodes (dev, ino),
 * which is exact even if a path was swapped after the file was written, and small: a million
 * paths held ~80 MiB, their inode numbers a fraction of it.
 */
export class OwnFiles {
  readonly #paths = new Set<string>();
  readonly #inodes = new Map<number, Set<number>>();

  addPath(rel: string): void {
    this.#paths.add(rel);
  }

  hasPath(rel: string): boolean {
    return this.#paths.has(rel);
  }

  addInode(s: Pick<Stats, 'dev' | 'ino'>): void {
    let inodes = this.#inodes.get(s.dev);
    if (!inodes) {
      inodes = new Set();
      this.#inodes.set(s.dev, inodes);
    }
    inodes.add(s.ino);
  }

  hasInode(s: Pick<Stats, 'dev' | 'ino'>): boolean {
    return this.#inodes.get(s.dev)?.has(s.ino) ?? false;
  }
}
