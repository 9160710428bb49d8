import { join } from 'node:path';
import { badRequest, conflict, notFound } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { Notifier } from '../../core/notify/ntfy.ts';
import { isNamespaceComponent, NAMESPACE_RULE } from '../../shared/namespace.ts';
import type { RequestReport, RestoreRequestView } from '../../shared/protocol/recovery.ts';
import type { RestoreDecided } from '../../shared/protocol/restore-requests.ts';
import { parseScoutKey, type ScoutKey } from '../archive/x25519.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { Runner } from '../schedule/runner.ts';
import type { ScoutSettingsService } from '../services/scout-settings.ts';
import { createStationClient, type InstanceClient, StationError } from '../upload/station-client.ts';
import { stationAppError, stationNotConfigured } from '../upload/station-errors.ts';
import {
  problemCounter,
  problemsAnswer,
  problemsSummary,
  restoreFailure,
  restoreNotice,
} from './restore-service.ts';
import { restoreArchive } from './restorer.ts';

const log = logger.child({ mod: 'scout/restore-requests' });

export type RestoreRequest = RestoreRequestView;

/** The Scout's side of Station restore requests: read them, accept (restore) or reject them. */
export function createRequestDecisions(deps: {
  settings: ScoutSettingsService;
  keys: KeyStore;
  instanceId: string;
  runner: Runner;
  scanRoot: string;
  notifier?: Notifier;
}) {
  /** This instance's client of the Station. */
  async function station(): Promise<InstanceClient> {
    const settings = await deps.settings.read();
    if (!settings.station_url || !settings.scout_credential) throw stationNotConfigured();
    return createStationClient(settings.station_url, settings.scout_credential).instance(
      settings.scout_id,
      deps.instanceId,
    );
  }

  async function call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw error instanceof StationError ? stationAppError(error) : error;
    }
  }

  /** Requests for this instance; none before its token is bound (no upload yet). */
  async function list(): Promise<RestoreRequest[]> {
    const client = await station();
    try {
      return await client.requests();
    } catch (error) {
      if (error instanceof StationError && error.code === 'not_bound') return [];
      throw error instanceof StationError ? stationAppError(error) : error;
    }
  }

  async function report(id: string, status: RequestReport) {
    const client = await station();
    return call(() => client.reportRequest(id, status));
  }

  return {
    list,

    /** A hint from the Station: only re-reads the list; never restores anything. */
    async hint(id: string): Promise<{ status: 'ok'; known: boolean }> {
      try {
        const requests = await list();
        return { status: 'ok', known: requests.some((r) => r.id === id) };
      } catch (error) {
        log.warn({ err: error }, 'could not re-read restore requests after a hint');
        return { status: 'ok', known: false };
      }
    },

    async decide(input: {
      id: string;
      decision: 'accept' | 'reject';
      relative_path?: string;
      encryption_key?: string;
    }): Promise<RestoreDecided> {
      const request = (await list()).find((r) => r.id === input.id);
      if (!request) throw notFound(`no restore request ${input.id} for this Scout`);
      if (request.status === 'expired')
        throw conflict('the restore request expired; ask the Station admin for a new one', 'expired');
      if (input.decision === 'reject') {
        await report(request.id, 'rejected');
        return { status: 'rejected', id: request.id };
      }
      const folder = input.relative_path ?? request.job_name;
      if (!isNamespaceComponent(folder)) {
        throw badRequest(
          `relative_path must be a single folder name directly under the scan root (${NAMESPACE_RULE})`,
        );
      }
      let keys: ScoutKey[];
      try {
        keys = input.encryption_key ? [parseScoutKey(input.encryption_key)] : deps.keys.all();
      } catch (error) {
        throw badRequest(`encryption_key is not a Scout key: ${(error as Error).message}`);
      }
      const outcome = await deps.runner.run('restore', request.job_name, async (ctx) => {
        await report(request.id, 'accepted');
        try {
          const client = await station();
          ctx.progress({ phase: 'downloading' });
          const download = await client.downloadRequest(request.id, ctx.signal);
          ctx.progress({ phase: 'restoring', bytes_total: download.size });
          const plan = await restoreArchive({
            source: download.body,
            keys,
            dest: join(deps.scanRoot, folder),
            listFiles: false,
            signal: ctx.signal,
            onSourceBytes: (bytes) => ctx.progress({ bytes_done: bytes }),
            onProblem: problemCounter(ctx),
          });
          await report(request.id, 'completed');
          restoreNotice(
            deps.notifier,
            'restore_completed',
            request.job_name,
            `restore request ${request.id}: ${download.filename} restored into ${folder}${problemsSummary(plan)}`,
            plan.problemCount > 0,
          );
          return { snapshot: download.filename, plan };
        } catch (error) {
          await report(request.id, 'rejected').catch(() => {});
          const failure = restoreFailure(error);
          restoreNotice(
            deps.notifier,
            'restore_failed',
            request.job_name,
            `restore request ${request.id} failed: ${(failure as Error).message}`,
          );
          throw failure;
        }
      });
      if (outcome.status === 'already_running') return { status: 'already_running' };
      const { snapshot, plan } = outcome.result;
      return {
        status: 'restored',
        id: request.id,
        snapshot,
        relative_path: folder,
        added: plan.counts.add,
        replaced: plan.counts.replace,
        bytes: plan.bytes,
        ...problemsAnswer(plan),
      };
    },
  };
}

export type RequestDecisions = ReturnType<typeof createRequestDecisions>;
