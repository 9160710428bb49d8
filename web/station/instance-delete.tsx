/**
 * Deleting an instance: every snapshot and index record of it. When files are already gone
 * from the disk the Station answers 409 and offers `cleanup_missing`; so does this dialog.
 */
import { useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { JobSummary } from '../../src/shared/protocol/jobs.ts';
import type { InstanceDeleted } from '../../src/shared/protocol/snapshots.ts';
import { ApiError, api, errorText } from '../common/api.ts';
import { Dialog } from '../common/dialog.tsx';
import { formatBytes } from '../common/format.ts';
import { ErrorText } from '../common/ui.tsx';

/** An instance as the dashboard shows it: its ID and its jobs loaded so far. */
export interface InstanceJobs {
  scout_instance_id: string;
  jobs: JobSummary[];
}

/** The 409's `detail` when files are missing: `{message, cleanup_available}`. */
function cleanupOffer(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.status !== 409) return null;
  const detail = (error.body as { detail?: unknown } | null)?.detail;
  if (detail && typeof detail === 'object' && (detail as { cleanup_available?: unknown }).cleanup_available) {
    const message = (detail as { message?: unknown }).message;
    return typeof message === 'string' ? message : error.detail;
  }
  return null;
}

export function InstanceDeleteDialog({
  scoutId,
  instance,
  onClose,
  onDeleted,
}: {
  scoutId: string;
  instance: InstanceJobs;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [offer, setOffer] = useState<string | null>(null);
  const count = instance.jobs.reduce((sum, job) => sum + job.snapshot_count + job.missing_count, 0);
  const bytes = instance.jobs.reduce((sum, job) => sum + job.total_bytes, 0);
  const jobNames = instance.jobs.map((job) => job.job_name);

  async function remove(cleanup: boolean) {
    setBusy(true);
    setError(null);
    try {
      await api.delete<InstanceDeleted>(stationPaths.instance(scoutId, instance.scout_instance_id, cleanup));
      onDeleted();
      onClose();
    } catch (err) {
      const message = cleanupOffer(err);
      setOffer(message);
      setError(message ?? errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog title="Delete instance" onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void remove(offer !== null);
        }}
      >
        <div class="dialog-body">
          <p>
            This permanently deletes every snapshot of instance <code>{instance.scout_instance_id}</code> of
            Scout <strong>{scoutId}</strong> from the Station's disk — {count} snapshot
            {count === 1 ? '' : 's'} ({formatBytes(bytes)})
            {jobNames.length > 0
              ? ` of the job${jobNames.length === 1 ? '' : 's'} ${jobNames.join(', ')}`
              : ''}{' '}
            — and its index records. It cannot be undone.
          </p>
          <p>
            The instance's Station token stays valid: its next backup uploads again. Revoke the token under
            Station tokens to stop it.
          </p>
        </div>
        <ErrorText error={error} />
        {offer !== null ? <p>Delete anyway and remove the records of the missing files as well?</p> : null}
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={busy}>
            {busy ? 'Working…' : offer !== null ? 'Delete and clean up missing records' : 'Delete instance'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
