import { ConfigError } from '../core/config.ts';
import { DataDirBusyError } from '../core/data-dir-lock.ts';
import { AppError } from '../core/errors.ts';

/** The one place errors become exit codes: one clear line on stderr. */
export async function runOrExit(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`backupd: ${message}\n`);
    if (error instanceof ConfigError || error instanceof AppError) process.exit(2);
    if (error instanceof DataDirBusyError) process.exit(3);
    process.exit(1);
  }
}
