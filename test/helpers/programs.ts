// External programs (age, zstd, tar, …) that some tests drive: required in CI (CI=true),
// skipped with a message elsewhere.
import { spawnSync } from 'node:child_process';

export const IN_CI = process.env.CI === 'true';

/** The programs among `programs` that cannot be started (not installed, not on PATH). */
export function missingPrograms<P extends string>(programs: readonly P[]): P[] {
  return programs.filter(
    (program) => spawnSync(program, ['--version'], { stdio: 'ignore' }).error !== undefined,
  );
}

/** `a`, `a or b`, `a, b or c`. */
function orList(names: readonly string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * The `skip` option for tests that need all of `programs`: a reason (`age, zstd or tar missing`)
 * when one is missing on a developer machine; false in CI, where the tests then run and fail.
 */
export function skipUnlessPrograms(programs: readonly string[]): string | false {
  return missingPrograms(programs).length > 0 && !IN_CI ? `${orList(programs)} missing` : false;
}
