/** "With this policy, these snapshots would be deleted": GET /api/retention/preview as a list. */
import type { RetentionPreviewReply } from '../../src/shared/protocol/retention.ts';
import { formatBytes } from '../common/format.ts';

const SHOWN = 10;

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
