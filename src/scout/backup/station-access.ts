import type { ErrorCode } from '../../shared/protocol/error-codes.ts';
import type { Circuit } from '../upload/circuit.ts';
import type { createStationClient, StationClient } from '../upload/station-client.ts';
import type { Trigger } from './trigger.ts';

/** Why a job's archive cannot go up now, and whether the operator must act (not just wait). */
export interface Blocked {
  message: string;
  attention: boolean;
  code: ErrorCode;
}

export interface StationAccessDeps {
  uploadsPaused: () => Promise<boolean>;
  circuit: Circuit;
  /** Makes a client of the Station (createStationClient, or a test's fake). */
  connect: typeof createStationClient;
}

/** A client of the Station when the job's archive can go up now, else why it cannot. */
export async function stationFor(
  deps: StationAccessDeps,
  trigger: Trigger,
  settings: { station_url: string | null; scout_credential: string | null },
): Promise<{ client: StationClient; blocked: null } | { client: null; blocked: Blocked }> {
  const blocked = (why: Blocked) => ({
    client: null,
    blocked: why,
  });
  if (await deps.uploadsPaused()) {
    return blocked({
      message: 'uploads are paused on this Scout; resume them to upload the staged archive',
      attention: false,
      code: 'uploads_paused',
    });
  }
  if (!settings.station_url || !settings.scout_credential) {
    return blocked({
      message:
        'no Station is set: enter the Station URL and a Station token in Settings (station_url, scout_credential)',
      attention: true,
      code: 'not_configured',
    });
  }
  if (trigger === 'schedule' && deps.circuit.blocksScheduled()) {
    const { retry_at } = deps.circuit.view();
    return blocked({
      message: `the Station was unreachable for several cycles; uploads resume at ${retry_at} or on run-now`,
      attention: false,
      code: 'station_unreachable',
    });
  }
  return { client: deps.connect(settings.station_url, settings.scout_credential), blocked: null };
}
