// Snapshot archives made with the real programs, the way a restore must be able to read them.
import { execFileSync } from 'node:child_process';

/** `tar --format=posix <tarArgs> -cf - | zstd -q -3 | age -r <recipient>`, run in `cwd`. */
export function archiveWithTools(cwd: string, tarArgs: string[], recipient: string): Buffer {
  return execFileSync(
    'sh',
    ['-c', 'tar --format=posix "$@" -cf - | zstd -q -3 | age -r "$0"', recipient, ...tarArgs],
    { cwd, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
  );
}
