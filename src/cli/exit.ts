import { ConfigError } from '../core/config.ts';
import { DataDirBusyError } from '../core/data-dir-lock.ts';
import { AppError } from '../core/errors.ts';

/** Exit codes (README, "Running"): what a script calling backupd can tell apart. */
export const EXIT = {
  failed: 1,
  usage: 2,
  busy: 3,
  restoredWithProblems: 4,
} as const;

/** A command that failed for a reason of its own (a restore's wrong key, bad token…): exit 1. */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
}

/** A restore that restored every entry it could and listed the rest: exit 4, its summary on stderr. */
export class RestoredWithProblems extends Error {
  override name = 'RestoredWithProblems';
}

/** The one place errors become exit codes: one clear line on stderr. */
export async function runOrExit(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`backupd: ${message}\n`);
    if (error instanceof RestoredWithProblems) process.exit(EXIT.restoredWithProblems);
    if (error instanceof CommandFailed) process.exit(EXIT.failed);
    if (error instanceof ConfigError || error instanceof AppError) process.exit(EXIT.usage);
    if (error instanceof DataDirBusyError) process.exit(EXIT.busy);
    process.exit(EXIT.failed);
  }
}
