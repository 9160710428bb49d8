import { spawn } from 'node:child_process';
import { logger } from '../log.ts';
import type { SettingsStore } from '../settings/settings-store.ts';
import type { FileFolder } from './hook-files.ts';

const log = logger.child({ mod: 'core/hooks' });
const SECTION = 'hooks';
export const HOOK_TIMEOUT_MS = 10 * 60 * 1000;
const OUTPUT_LIMIT = 64 * 1024;

export interface HookResult {
  ran: boolean;
  exit_code: number | null;
  timed_out: boolean;
  output: string;
}

/**
 * Admin-set shell commands run before and after work (the Station's finalize, the Scout's
 * job backup). The event's facts reach the command only as BACKUPD_* environment variables,
 * never inside the command text. The command runs in the hook-files folder, with a timeout.
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
    const env: Record<string, string> = { ...process.env } as Record<string, string>;
    for (const [key, value] of Object.entries(facts)) {
      if (value !== undefined) env[`BACKUPD_${key.toUpperCase()}`] = String(value);
    }
    return new Promise((resolve) => {
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: deps.files.dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const collect = (d: Buffer) => {
        if (output.length < OUTPUT_LIMIT) output += d.toString('utf8');
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, deps.timeoutMs ?? HOOK_TIMEOUT_MS);
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ ran: true, exit_code: null, timed_out: false, output: String(error.message) });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ ran: true, exit_code: code, timed_out: timedOut, output: output.slice(0, OUTPUT_LIMIT) });
      });
    });
  }

  async function runPhase(phase: 'pre' | 'post', facts: Record<string, string | number | undefined>) {
    const command = (await settings())[phase === 'pre' ? deps.fields.pre : deps.fields.post]?.trim();
    if (!command) return { ran: false, exit_code: null, timed_out: false, output: '' } satisfies HookResult;
    await deps.files.list(); // makes sure the working folder exists
    const result = await run(command, { ...facts, hook: phase });
    const level = result.exit_code === 0 ? 'info' : 'warn';
    log[level](
      { phase, exit_code: result.exit_code, timed_out: result.timed_out, output: result.output.slice(-2000) },
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
