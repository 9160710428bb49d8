/** The Station's disk, what it holds, its upload limit, and whether uploads are accepted. */
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { OverviewStorage } from '../../src/shared/protocol/overview.ts';
import type { UploadPauseReply } from '../../src/shared/protocol/settings.ts';
import { api } from '../common/api.ts';
import { formatBytes } from '../common/format.ts';
import { ErrorText, Section, useAction } from '../common/ui.tsx';

export function StorageCard({
  storage,
  isAdmin,
  onChanged,
}: {
  storage: OverviewStorage;
  isAdmin: boolean;
  onChanged: () => Promise<void>;
}) {
  const toggle = useAction();
  const total = storage.total_bytes;
  const used =
    storage.used_bytes ?? (total !== null && storage.free_bytes !== null ? total - storage.free_bytes : null);
  const pct = total && used !== null ? Math.min(100, Math.max(0, (used / total) * 100)) : null;
  const tone = pct === null ? '' : pct >= 90 ? ' bad' : pct >= 75 ? ' warn' : '';
  const paused = storage.uploads_paused === true;

  return (
    <Section
      title="Storage"
      actions={
        <span class={`badge ${paused ? 'warn' : 'ok'}`} data-testid="uploads-state">
          {paused ? 'Uploads paused' : 'Uploads accepted'}
        </span>
      }
    >
      {pct !== null ? (
        <div class={`meter${tone}`} aria-hidden="true" title={`${Math.round(pct)}% of the disk used`}>
          <span style={{ width: `${pct}%` }} />
        </div>
      ) : null}
      <dl class="facts storage-facts">
        <dt>Disk</dt>
        <dd>
          {formatBytes(used)} used of {formatBytes(total)},{' '}
          <strong>{formatBytes(storage.free_bytes)} free</strong>
          {pct !== null ? ` (${Math.round(pct)}% used)` : ''}
          {storage.writable === false ? (
            <>
              {' '}
              <span class="badge bad">Not writable</span>
            </>
          ) : null}
        </dd>
        <dt>Snapshots</dt>
        <dd data-testid="storage-snapshots">
          {storage.snapshot_count ?? '—'} ({formatBytes(storage.snapshot_bytes)})
        </dd>
        <dt>Upload limit</dt>
        <dd>{formatBytes(storage.max_upload_bytes)} per archive</dd>
        {storage.backup_root ? (
          <>
            <dt>Folder</dt>
            <dd>
              <code>{storage.backup_root}</code>
            </dd>
          </>
        ) : null}
        <dt>Uploads</dt>
        <dd>
          <div class="actions">
            <span>
              {paused
                ? 'Paused: Scouts are refused (503) and keep their archives to upload later.'
                : 'Accepted: Scouts may upload.'}
            </span>
            {isAdmin ? (
              <button
                type="button"
                disabled={toggle.busy}
                onClick={() =>
                  void toggle.run(async () => {
                    await api.post<UploadPauseReply>(
                      paused ? stationPaths.uploadsResume : stationPaths.uploadsPause,
                    );
                    await onChanged();
                  })
                }
              >
                {paused ? 'Resume uploads' : 'Pause uploads'}
              </button>
            ) : null}
          </div>
          <ErrorText error={toggle.error} />
        </dd>
      </dl>
    </Section>
  );
}
