// What a snapshot left out (issue #24: a skipped file is never silent): the job state's
// `last_skipped`, `{count, paths}` with the first paths shown escaped (src/shared/byte-names.ts).
import { escapeName } from '../../shared/byte-names.ts';
import type { SkippedEntry } from './walk.ts';

/** How many paths `last_skipped` lists; `count` counts them all. */
export const SKIPPED_PATHS_SHOWN = 20;

export interface SkippedSummary {
  count: number;
  paths: string[];
}

/** The summary of what was left out, in the order it was met; null when nothing was. */
export function summarizeSkipped(skipped: readonly SkippedEntry[]): SkippedSummary | null {
  if (skipped.length === 0) return null;
  return {
    count: skipped.length,
    paths: skipped.slice(0, SKIPPED_PATHS_SHOWN).map((entry) => escapeName(entry.path)),
  };
}

/** "3 entries were left out (secret.txt, pipe, …)": for notifications and logs. */
export function describeSkipped(summary: SkippedSummary): string {
  const shown = summary.paths.slice(0, 3).join(', ');
  const more = summary.count > 3 ? ', …' : '';
  return `${summary.count} ${summary.count === 1 ? 'entry was' : 'entries were'} left out (${shown}${more})`;
}
