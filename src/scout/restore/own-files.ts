import type { Stats } from 'node:fs';

/** Inodes per slot: a slot holds one 32-bit word of membership bits. */
const WORD = 32;

/**
 * Inode numbers of one device, as a hash set of 32-inode words with open addressing: each slot
 * is a word number (`ino / 32`) and a bit per inode of that word. A restore into a fresh file
 * system gets nearly consecutive inode numbers (ext4 and XFS give a folder's files numbers
 * near each other), so a million files fill ~31,000 words: 512 KiB with the table kept at
 * most half full, where one slot per inode took 8 MiB (issue #27 item 4: the restore's memory
 * flat in the number of files; the restore CLI's 200 MiB line). Scattered numbers cost at
 * most 16 bytes each. Numbers of 2^32 and above (some file systems) go to a plain Set.
 */
export class InodeSet {
  /** Word number + 1 (0 = empty slot). */
  #words = new Uint32Array(1024);
  /** Bit `ino % 32` of the slot's word: that inode is in the set. */
  #bits = new Uint32Array(1024);
  #used = 0;
  readonly #large = new Set<number>();

  add(ino: number): void {
    if (!InodeSet.#fits(ino)) {
      this.#large.add(ino);
      return;
    }
    const word = Math.floor(ino / WORD) + 1;
    let at = this.#find(this.#words, word);
    if (this.#words[at] === 0) {
      if ((this.#used + 1) * 2 > this.#words.length) {
        this.#grow();
        at = this.#find(this.#words, word);
      }
      this.#words[at] = word;
      this.#used += 1;
    }
    this.#bits[at] = (this.#bits[at] as number) | (1 << (ino % WORD));
  }

  has(ino: number): boolean {
    if (!InodeSet.#fits(ino)) return this.#large.has(ino);
    const at = this.#find(this.#words, Math.floor(ino / WORD) + 1);
    return this.#words[at] !== 0 && ((this.#bits[at] as number) & (1 << (ino % WORD))) !== 0;
  }

  /** Bytes of the tables (the Set of large numbers aside). */
  get tableBytes(): number {
    return this.#words.byteLength + this.#bits.byteLength;
  }

  static #fits(ino: number): boolean {
    return Number.isInteger(ino) && ino >= 0 && ino < 2 ** 32;
  }

  /** The slot holding `word`, or the empty one where it would go. */
  #find(words: Uint32Array, word: number): number {
    const mask = words.length - 1;
    let at = Math.imul(word, 0x9e3779b1) >>> (32 - Math.log2(words.length));
    while (words[at] !== 0 && words[at] !== word) at = (at + 1) & mask;
    return at;
  }

  #grow(): void {
    const oldWords = this.#words;
    const oldBits = this.#bits;
    this.#words = new Uint32Array(oldWords.length * 2);
    this.#bits = new Uint32Array(oldWords.length * 2);
    for (let i = 0; i < oldWords.length; i += 1) {
      const word = oldWords[i] as number;
      if (word === 0) continue;
      const at = this.#find(this.#words, word);
      this.#words[at] = word;
      this.#bits[at] = oldBits[i] as number;
    }
  }
}

/**
 * The files a restore wrote (or found already right): the only targets a hard link entry may
 * have. A dry run writes nothing and remembers paths; a restore remembers inodes (dev, ino),
 * which is exact even if a path was swapped after the file was written, and small: a million
 * paths held ~80 MiB, their inode numbers (InodeSet) ~0.5 MiB on a fresh file system.
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
