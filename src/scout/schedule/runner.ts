import { clock } from '../../core/clock.ts';
import { logger } from '../../core/log.ts';
import type { OperationKind, OperationView } from '../../shared/protocol/scout-status.ts';

const log = logger.child({ mod: 'scout/runner' });

export type { OperationKind };
/** The running operation as GET /api/status shows it (src/shared/protocol/scout-status.ts). */
export type Operation = OperationView;

/** Told of every progress update of an operation, before it applies (`op` still shows the old values). */
export type ProgressObserver = (op: Readonly<Operation>, patch: OperationPatch) => void;
type OperationPatch = Partial<
  Pick<Operation, 'job_name' | 'phase' | 'bytes_done' | 'bytes_total' | 'problems'>
>;

export interface OperationContext {
  signal: AbortSignal;
  /** Updates what status shows of the running operation. */
  progress(patch: OperationPatch): void;
}

/**
 * One operation at a time per Scout (a cycle, a forced upload or a restore); each can be
 * cancelled. `afterEach` runs when one has ended, whatever its outcome, before the next can
 * start (the Scout returns the memory the operation freed: src/core/release-memory.ts).
 */
export function createRunner(options: { afterEach?: () => void } = {}) {
  let operation: Operation | null = null;
  let controller: AbortController | null = null;
  let running: Promise<void> | null = null;
  const observers: ProgressObserver[] = [];

  return {
    current: () => operation,
    state: (): 'idle' | 'running' | 'cancelling' =>
      operation === null ? 'idle' : controller?.signal.aborted ? 'cancelling' : 'running',
    busy: () => operation !== null,
    /** Adds an observer of progress updates (metrics count bytes with it). */
    observeProgress: (observer: ProgressObserver) => {
      observers.push(observer);
    },

    /** Starts `work` in the background unless something runs; does not wait for it. */
    start(kind: OperationKind, jobName: string | null, work: (ctx: OperationContext) => Promise<void>) {
      if (operation) return 'already_running' as const;
      controller = new AbortController();
      const op: Operation = {
        kind,
        job_name: jobName,
        phase: 'starting',
        bytes_done: 0,
        bytes_total: 0,
        problems: 0,
        started_at: clock.date().toISOString(),
      };
      operation = op;
      const ctx: OperationContext = {
        signal: controller.signal,
        progress: (patch) => {
          for (const observe of observers) observe(op, patch);
          Object.assign(op, patch);
        },
      };
      running = (async () => {
        try {
          await work(ctx);
        } catch (error) {
          if (!ctx.signal.aborted) log.error({ err: error, kind }, 'operation failed');
        } finally {
          try {
            options.afterEach?.();
          } catch (error) {
            log.warn({ err: error }, 'after an operation');
          }
          operation = null;
          controller = null;
          running = null;
        }
      })();
      return 'queued' as const;
    },

    /** Runs `work` now and waits for it, or answers `already_running`. */
    async run<T>(kind: OperationKind, jobName: string | null, work: (ctx: OperationContext) => Promise<T>) {
      let result: T | undefined;
      let failure: unknown;
      const outcome = this.start(kind, jobName, async (ctx) => {
        try {
          result = await work(ctx);
        } catch (error) {
          failure = error;
        }
      });
      if (outcome === 'already_running') return { status: 'already_running' as const };
      await running;
      if (failure) throw failure;
      return { status: 'done' as const, result: result as T };
    },

    cancel(): 'cancelling' | 'idle' {
      if (!operation || !controller) return 'idle';
      controller.abort(new Error('cancelled by the operator'));
      return 'cancelling';
    },

    /** Cancels what runs and waits for it to stop (shutdown). */
    async stop(): Promise<void> {
      controller?.abort(new Error('the Scout is stopping'));
      await running;
    },
  };
}

export type Runner = ReturnType<typeof createRunner>;
