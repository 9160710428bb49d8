import type { Readable } from 'node:stream';
import type { ScoutKey } from '../archive/x25519.ts';
import { byteString, shown } from './byte-paths.ts';
import { readSnapshotTar } from './snapshot-stream.ts';
import { readTar } from './tar-reader.ts';

/** One entry of a snapshot as `backupd scout restore --list-files` shows it. */
export interface SnapshotEntry {
  /** Escaped as src/shared/byte-names.ts writes names; a folder ends in `/`. */
  path: string;
  kind: 'file' | 'folder' | 'symlink' | 'hardlink' | 'other';
  size: number;
}

const KINDS: Record<string, SnapshotEntry['kind']> = {
  '0': 'file',
  '5': 'folder',
  '2': 'symlink',
  '1': 'hardlink',
};

/** Reads an encrypted snapshot through and passes each entry to `onEntry`; writes nothing. */
export async function listSnapshotEntries(
  options: { source: Readable; keys: ScoutKey[]; onSourceBytes?: (bytes: number) => void },
  onEntry: (entry: SnapshotEntry) => void,
): Promise<void> {
  await readSnapshotTar(options, (tar) =>
    readTar(tar, async (entry) => {
      const path = byteString(entry.path)
        .replace(/^(\.\/)+/, '')
        .replace(/\/+$/, '');
      if (path === '' || path === '.') return;
      const kind = KINDS[entry.type] ?? 'other';
      const name = `${shown(path)}${kind === 'folder' ? '/' : ''}`;
      onEntry({ path: name, kind, size: kind === 'file' ? entry.size : 0 });
    }),
  );
}
