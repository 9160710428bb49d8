/** "With this policy, these snapshots would be deleted": GET /api/retention/preview as a list. */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { RetentionPreviewReply } from '../../src/shared/protocol/retention.ts';
import { api } from '../common/api.ts';
import { formatBytes } from '../common/format.ts';
import type { useAction } from '../common/ui.tsx';

const SHOWN = 10;

type PreviewQuery = Parameters<typeof stationPaths.retentionPreview>[0];

/**
 * What the policy in the fields would delete: GET /api/retention/preview with `query()`, asked
 * 250 ms after `values` last changed (as they are typed); not asked while `query` gives null.
 */
export function useRetentionPreview(
  values: unknown,
  query: () => PreviewQuery | null,
  action: ReturnType<typeof useAction>,
): RetentionPreviewReply | null {
  const [preview, setPreview] = useState<RetentionPreviewReply | null>(null);
  useEffect(() => {
    const asked = query();
    if (!asked) return;
    const timer = setTimeout(() => {
      void action.run(async () =>
        setPreview(await api.get<RetentionPreviewReply>(stationPaths.retentionPreview(asked))),
      );
    }, 250);
    return () => clearTimeout(timer);
  }, [values]);
  return preview;
}

export function RetentionPreview({ preview }: { preview: RetentionPreviewReply }) {
  const affected = preview.jobs.filter((job) => job.deleted.length > 0);
  return (
    <div class="retention-preview" data-testid="retention-preview" aria-live="polite">
      <h3>Preview</h3>
      <p>
        {preview.delete_count === 0
          ? 'With this policy, no snapshot would be deleted.'
          : `With this policy, ${preview.delete_count === 1 ? 'this snapshot' : `these ${preview.delete_count} snapshots`} (${formatBytes(preview.delete_bytes)}) would be deleted at each job's next upload:`}
      </p>
      {affected.map((job) => (
        <div key={`${job.scout_id}/${job.scout_instance_id}/${job.job_name}`}>
          <h4>
            {job.scout_id} / {job.scout_instance_id} / {job.job_name}: {job.deleted.length} of{' '}
            {job.deleted.length + job.kept.length}
          </h4>
          <ul>
            {job.deleted.slice(0, SHOWN).map((s) => (
              <li key={s.filename}>
                <code>{s.filename}</code> (stored {s.stored_at.slice(0, 16).replace('T', ' ')} UTC)
              </li>
            ))}
            {job.deleted.length > SHOWN ? <li>… and {job.deleted.length - SHOWN} more</li> : null}
          </ul>
        </div>
      ))}
    </div>
  );
}
