// The `.upload_dir` marker: YAML that makes a folder a backup job. A marker that does not
// parse gives the job a config error; it is never guessed at.
import { parseDocument, stringify } from 'yaml';
import { z } from 'zod';
import { isNamespaceComponent, NAMESPACE_RULE } from '../../shared/namespace.ts';
import {
  CHANGE_DETECTIONS,
  type ChangeDetection,
  type JobConfigView,
} from '../../shared/protocol/scout-jobs.ts';

export const MARKER = '.upload_dir';

export { CHANGE_DETECTIONS, type ChangeDetection };
/** A marker's configuration: what `/api/directories` answers as a job's `config`. */
export type JobConfig = JobConfigView;

const KEYS = ['job_name', 'include_hidden', 'follow_symlinks', 'exclude', 'change_detection'] as const;
const MAX_PATTERNS = 10_000;
const MAX_PATTERN_LENGTH = 4096;

/** The partial configuration an admin may send; also checks what a marker holds. */
export const JobConfigInput = z.strictObject(
  {
    job_name: z
      .string({ error: 'job_name must be text (quote it if it looks like a number)' })
      .refine(isNamespaceComponent, `job_name must be ${NAMESPACE_RULE}; choose another job_name`)
      .optional(),
    include_hidden: z.boolean({ error: 'include_hidden must be true or false' }).optional(),
    follow_symlinks: z.boolean({ error: 'follow_symlinks must be true or false' }).optional(),
    exclude: z
      .array(
        z
          .string({ error: 'exclude must be a list of patterns written as text' })
          .max(MAX_PATTERN_LENGTH, `exclude patterns must be at most ${MAX_PATTERN_LENGTH} characters`)
          .refine((pattern) => !/[\r\n\0]/.test(pattern), 'exclude patterns must be single lines'),
        { error: 'exclude must be a list of patterns, e.g. ["*.tmp", "cache/"]' },
      )
      .max(MAX_PATTERNS, `exclude may hold at most ${MAX_PATTERNS} patterns`)
      .optional(),
    change_detection: z
      .enum(CHANGE_DETECTIONS, {
        error:
          'change_detection must be sizes (paths and sizes, the default) or mtimes (modification times count too)',
      })
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown ${issue.keys.length > 1 ? 'keys' : 'key'} ${issue.keys.map((k) => `"${k}"`).join(', ')}; allowed keys are ${KEYS.join(', ')}`
        : `the job configuration must be a mapping of ${KEYS.join(', ')}`,
  },
);

/** The folder name made a valid namespace component. */
export function defaultJobName(folderName: string): string {
  const cleaned = folderName
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^\.+/, '')
    .slice(0, 64);
  return isNamespaceComponent(cleaned) ? cleaned : 'job';
}

function defaults(folderName: string): Required<JobConfig> {
  return {
    job_name: defaultJobName(folderName),
    include_hidden: true,
    follow_symlinks: false,
    exclude: [],
    change_detection: 'sizes',
  };
}

type Parsed = { config: JobConfig; error: null } | { config: null; error: string };

const fail = (problem: string): Parsed => ({ config: null, error: `${MARKER}: ${problem}` });

/** Reads a marker's text; empty (or only comments) means the defaults. */
export function parseMarker(text: string, folderName: string): Parsed {
  const doc = parseDocument(text, { uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    // The message reads "<problem> at line L, column C:" followed by a snippet.
    const problem = (syntax.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:$/, '');
    const where = syntax.linePos ? ` at line ${syntax.linePos[0].line}` : '';
    return fail(`not valid YAML${where} (${problem}); fix it or empty the file to use the defaults`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return fail(`not valid YAML (${(error as Error).message}); fix it or empty the file to use the defaults`);
  }
  if (value === null || value === undefined) return { config: defaults(folderName), error: null };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return fail(`must be a mapping of ${KEYS.join(', ')} (or empty for the defaults)`);
  }
  const given = { ...(value as Record<string, unknown>) };
  // `exclude:` with nothing under it reads as null: no exclusions.
  if (given.exclude === null) given.exclude = [];
  const checked = JobConfigInput.safeParse(given);
  if (!checked.success) {
    const problems = [...new Set(checked.error.issues.map((issue) => issue.message))];
    return fail(problems.join('; '));
  }
  const config = { ...defaults(folderName), ...checked.data };
  return { config, error: null };
}

/** YAML that `parseMarker` reads back to the same configuration; only given fields are written. */
export function serializeMarker(config: Partial<JobConfig>): string {
  const out: Partial<JobConfig> = {};
  for (const key of KEYS) {
    if (config[key] !== undefined) Object.assign(out, { [key]: config[key] });
  }
  // The default needs no line of its own.
  if (out.change_detection === 'sizes') delete out.change_detection;
  if (Object.keys(out).length === 0) return '';
  return stringify(out, { lineWidth: 0 });
}
