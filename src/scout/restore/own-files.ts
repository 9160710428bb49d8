import type { Stats } from 'node:fs';

/**
 * Inode numbers of one device, as a hash set of 32-bit numbers with open addressing: at most
 * 8 bytes a file (the table is kept at most half full), where a `Set` of numbers took ~40
 * and more once the numbers leave V8's small-integer range. A restore of a million files
 * remembers every file it wrote (issue #27 item 4: the restore's memory flat in the number
 * of files). Numbers of 2^32 - 1 and above (some file systems) go to a plain Set.
 */
class InodeSet {
  /** Inode + 1 (0 = empty slot). */
  #slots = new Uint32Array(1024);
  #count = 0;
  readonly #large = new Set<number>();

  add(ino: number): void {
    if (!InodeSet.#fits(ino)) {
      this.#large.add(ino);
      return;
    }
    if ((this.#count + 1) * 2 > this.#slots.length) this.#grow();
    const at = this.#find(this.#slots, ino + 1);
    if (this.#slots[at] === 0) {
      this.#slots[at] = ino + 1;
      this.#count += 1;
    }
  }

  has(ino: number): boolean {
    if (!InodeSet.#fits(ino)) return this.#large.has(ino);
    return this.#slots[this.#find(this.#slots, ino + 1)] !== 0;
  }

  static #fits(ino: number): boolean {
    return Number.isInteger(ino) && ino >= 0 && ino < 0xffffffff;
  }

  /** The slot holding `key`, or the empty one where it would go. */
  #find(slots: Uint32Array, key: number): number {
    const mask = slots.length - 1;
    let at = Math.imul(key, 0x9e3779b1) >>> (32 - Math.log2(slots.length));
    while (slots[at] !== 0 && slots[at] !== key) at = (at + 1) & mask;
    return at;
  }

  #grow(): void {
    const old = this.#slots;
    const slots = new Uint32Array(old.length * 2);
    for (const key of old) if (key !== 0) slots[this.#find(slots, key)] = key;
    this.#slots = slots;
  }
}

/**
 * The files a restore wrote (or found already right): the only targets a hard link entry may
 * have. A dry run writes nothing and remembers paths; a restore remembers inodes (dev, ino),
 * which is exact even if a path was swapped after the file was written, and small: a million
 * paths held ~80 MiB, their inode numbers 4-8 MiB.
 */
export class OwnFiles {
  readonly #paths = new Set<string>();
  readonly #inodes = new Map<number, InodeSet>();

  addPath(rel: string): void {
    this.#paths.add(rel);
  }

  hasPath(rel: string): boolean {
    return this.#paths.has(rel);
  }

  addInode(s: Pick<Stats, 'dev' | 'ino'>): void {
    let inodes = this.#inodes.get(s.dev);
    if (!inodes) {
      inodes = new InodeSet();
      this.#inodes.set(s.dev, inodes);
    }
    inodes.add(s.ino);
  }

  hasInode(s: Pick<Stats, 'dev' | 'ino'>): boolean {
    return this.#inodes.get(s.dev)?.has(s.ino) ?? false;
  }
}
