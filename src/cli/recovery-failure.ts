import { AppError } from '../core/errors.ts';
import { restoreFailure } from '../scout/restore/restore-service.ts';
import { StationError } from '../scout/upload/station-client.ts';

/** How to get a token that may recover `scoutId/instanceId` (the Station dashboard's words). */
const tokenAdvice = (instance: string) =>
  `mint a recovery token for ${instance} in the Station's dashboard (Instances → Mint a recovery token) or use the old host's token`;

/**
 * A download failure of `backupd scout restore`, said for an operator at a shell: the token
 * problems name the instance and where to get a token that may recover it.
 */
export function recoveryFailure(error: unknown, scoutId: string, instanceId: string): unknown {
  if (error instanceof StationError && (error.status === 401 || error.status === 403)) {
    const instance = `${scoutId}/${instanceId}`;
    const detail = typeof error.detail === 'string' ? error.detail : error.message;
    const what =
      error.status === 401
        ? `the Station does not accept this token (${detail})`
        : `this token may not recover ${instance} (the Station refused it)`;
    return new AppError(error.status, `${what}; ${tokenAdvice(instance)}`);
  }
  return restoreFailure(error);
}
