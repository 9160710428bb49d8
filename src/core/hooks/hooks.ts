import { spawn } from 'node:child_process';
import { clock } from '../clock.ts';
import { logger } from '../log.ts';
import type { SettingsStore } from '../settings/settings-store.ts';
import { hookEnvironment } from './hook-environment.ts';
import type { FileFolder } from './hook-files.ts';

const log = logger.child({ mod: 'core/hooks' });
const SECTION = 'hooks';
export const HOOK_TIMEOUT_MS = 10 * 60 * 1000;

export interface HookResult {
  ran: boolean;
  exit_code: number | null;
  timed_out: boolean;
  /** How much the command wrote to stdout and stderr; the bytes themselves are never kept. */
  output_bytes: number;
  duration_ms: number;
  /** Why the command could not be started (spawn's error), or null. */
  start_error: string | null;
}

/** The result when no command is set for the phase. */
export const NOT_RUN: HookResult = Object.freeze({
  ran: false,
  exit_code: null,
  timed_out: false,
  output_bytes: 0,
  duration_ms: 0,
  start_error: null,
});

/**
 * Admin-set shell commands run before and after work (the Station's finalize, the Scout's
 * job backup). The event's facts reach the command only as BACKUPD_* environment variables,
 * never inside the command text, in an environment without the server's (hook-environment.ts).
 * The command runs in the hook-files folder, with a timeout. Its output is counted, never
 * kept: a hook may print what it handles (a database dump's password prompt, file names), and
 * the log goes wherever the host ships logs.
 */
export function createHooks(deps: {
  store: SettingsStore;
  files: FileFolder;
  /** The settings field names of this role: `pre_command`/`post_command` or `hook_pre_command`/`hook_post_command`. */
  fields: { pre: string; post: string };
  timeoutMs?: number;
}) {
  async function settings(): Promise<Record<string, string>> {
    const saved = await deps.store.read(SECTION);
    return {
      [deps.fields.pre]: typeof saved[deps.fields.pre] === 'string' ? (saved[deps.fields.pre] as string) : '',
      [deps.fields.post]:
        typeof saved[deps.fields.post] === 'string' ? (saved[deps.fields.post] as string) : '',
    };
  }

  function run(command: string, facts: Record<string, string | number | undefined>): Promise<HookResult> {
    const started = clock.now();
    return new Promise((resolve) => {
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: deps.files.dir,
        env: hookEnvironment(facts),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let outputBytes = 0;
      const count = (d: Buffer) => {
        outputBytes += d.length;
      };
      child.stdout.on('data', count);
      child.stderr.on('data', count);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, deps.timeoutMs ?? HOOK_TIMEOUT_MS);
      const done = (exitCode: number | null, startError: string | null) => {
        clearTimeout(timer);
        resolve({
          ran: true,
          exit_code: exitCode,
          timed_out: timedOut,
          output_bytes: outputBytes,
          duration_ms: clock.now() - started,
          start_error: startError,
        });
      };
      child.on('error', (error) => done(null, error.message));
      child.on('close', (code) => done(code, null));
    });
  }

  async function runPhase(phase: 'pre' | 'post', facts: Record<string, string | number | undefined>) {
    const command = (await settings())[phase === 'pre' ? deps.fields.pre : deps.fields.post]?.trim();
    if (!command) return NOT_RUN;
    await deps.files.list(); // makes sure the working folder exists
    const result = await run(command, { ...facts, hook: phase });
    const level = result.exit_code === 0 ? 'info' : 'warn';
    log[level](
      {
        phase,
        exit_code: result.exit_code,
        timed_out: result.timed_out,
        duration_ms: result.duration_ms,
        output_bytes: result.output_bytes,
        ...(result.start_error ? { start_error: result.start_error } : {}),
      },
      'hook ran',
    );
    return result;
  }

  return {
    settings,
    async save(input: Record<string, string>): Promise<Record<string, string>> {
      await deps.store.write(SECTION, {
        [deps.fields.pre]: input[deps.fields.pre] ?? '',
        [deps.fields.post]: input[deps.fields.post] ?? '',
      });
      return settings();
    },
    pre: (facts: Record<string, string | number | undefined>) => runPhase('pre', facts),
    post: (facts: Record<string, string | number | undefined>) => runPhase('post', facts),
  };
}

export type Hooks = ReturnType<typeof createHooks>;
