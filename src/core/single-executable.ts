import sea from 'node:sea';

/**
 * Facts about running as the single executable (`dist/backupd`, Node's SEA): there the
 * program is the executable itself (no script path in argv) and files that would sit beside
 * the bundle are assets inside the executable.
 */
export const isSingleExecutable = (): boolean => sea.isSea();

/** An embedded asset, without copying (the single executable only). */
export function embeddedAsset(name: string): ArrayBuffer {
  return sea.getRawAsset(name);
}

export function embeddedBlob(name: string): Blob {
  return sea.getAssetAsBlob(name);
}

/** The command line that runs this same program again with `args` (for child processes). */
export function selfCommand(args: string[]): { command: string; args: string[] } | null {
  if (isSingleExecutable()) return { command: process.execPath, args };
  const script = process.argv[1];
  if (!script) return null;
  return { command: process.execPath, args: [...process.execArgv, script, ...args] };
}
