/** One job's snapshots, newest first, with download, restore request and delete; shown on demand. */
import { useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { JobKey } from '../../src/shared/protocol/job-key.ts';
import type { OverviewSnapshot } from '../../src/shared/protocol/overview.ts';
import type { ProtectBody, SnapshotProtected } from '../../src/shared/protocol/snapshots.ts';
import { api } from '../common/api.ts';
import { ConfirmDialog } from '../common/dialog.tsx';
import { formatBytes } from '../common/format.ts';
import { TableHead, Time } from '../common/ui.tsx';
import { MISSING_RULE, UNUSUAL_RULE } from './health.ts';
import { JobRetention } from './job-retention.tsx';
import { LockBadges } from './lock-badges.tsx';
import { Filename } from './names.tsx';
import { RestoreDialog } from './restore-dialog.tsx';

/** Rows shown at first; more on request (retention may keep thousands). */
const PAGE_ROWS = 50;

type Open = { kind: 'delete' | 'restore'; snapshot: OverviewSnapshot } | null;

export function SnapshotTable({
  id,
  job,
  snapshots,
  isAdmin,
  onChanged,
}: {
  id: string;
  job: JobKey;
  /** Newest first, as GET /api/jobs/…/snapshots lists them. */
  snapshots: OverviewSnapshot[];
  isAdmin: boolean;
  onChanged: () => void;
}) {
  const [limit, setLimit] = useState(PAGE_ROWS);
  const [open, setOpen] = useState<Open>(null);
  const rows = snapshots.slice(0, limit);
  return (
    <div class="snapshots" id={id}>
      {isAdmin ? <JobRetention job={job} onChanged={onChanged} /> : null}
      <div class="table-wrap">
        <table class="stack">
          <caption class="visually-hidden">Snapshots of {job.jobName}, newest first</caption>
          <TableHead columns={['Snapshot', 'Size', 'Stored', 'Notes']} actions />
          <tbody>
            {rows.map((s) => (
              <SnapshotRow
                key={s.name}
                job={job}
                snapshot={s}
                isAdmin={isAdmin}
                onOpen={(kind) => setOpen({ kind, snapshot: s })}
                onChanged={onChanged}
              />
            ))}
          </tbody>
        </table>
      </div>
      {snapshots.length > limit ? (
        <button type="button" class="link" onClick={() => setLimit(limit + PAGE_ROWS * 4)}>
          Show older snapshots ({snapshots.length - limit} more)
        </button>
      ) : null}
      {open?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete snapshot"
          confirmLabel="Delete snapshot"
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            await api.delete(stationPaths.snapshot(job, open.snapshot.name));
            onChanged();
          }}
        >
          <p>
            This permanently deletes the snapshot <code>{open.snapshot.name}</code> (
            {formatBytes(open.snapshot.size_bytes)}
            {open.snapshot.mtime ? (
              <>
                , stored <Time value={open.snapshot.mtime} />
              </>
            ) : null}
            ) of job <strong>{job.jobName}</strong> on Scout <strong>{job.scoutId}</strong>, instance{' '}
            <code>{job.instanceId}</code> from the Station's disk. It cannot be undone.
          </p>
          <p>
            The other {snapshots.length - 1} snapshot{snapshots.length === 2 ? '' : 's'} of the job stay.
          </p>
        </ConfirmDialog>
      ) : null}
      {open?.kind === 'restore' ? (
        <RestoreDialog job={job} filename={open.snapshot.name} onClose={() => setOpen(null)} />
      ) : null}
    </div>
  );
}

function SnapshotRow({
  job,
  snapshot: s,
  isAdmin,
  onOpen,
  onChanged,
}: {
  job: JobKey;
  snapshot: OverviewSnapshot;
  isAdmin: boolean;
  onOpen: (kind: 'delete' | 'restore') => void;
  onChanged: () => void;
}) {
  const protect = async (value: boolean) => {
    await api.post<SnapshotProtected>(stationPaths.snapshotProtect(job, s.name), {
      protected: value,
    } satisfies ProtectBody);
    onChanged();
  };
  return (
    <tr class={s.unusual ? 'unusual' : undefined} data-snapshot={s.name}>
      <td class="name">
        <Filename name={s.name} />
      </td>
      <td class="num" data-label="Size">
        {formatBytes(s.size_bytes)}
      </td>
      <td class="nowrap" data-label="Stored">
        <Time value={s.stored_at ?? s.mtime} />
      </td>
      <td class="notes">
        <LockBadges snapshot={s} />
        {s.unusual ? (
          <span class="note">
            <span class="badge warn" title={UNUSUAL_RULE}>
              Unusual
            </span>{' '}
            <small>{s.unusual_reason ?? 'size or Scout key changed sharply'}</small>
          </span>
        ) : null}
        {s.missing ? (
          <span class="badge bad" title={MISSING_RULE}>
            File missing
          </span>
        ) : null}
      </td>
      <td class="row-actions">
        <div class="actions nowrap">
          {s.missing ? null : (
            <a
              class="button"
              href={stationPaths.snapshot(job, s.name)}
              download={s.name}
              aria-label={`Download ${s.name}`}
            >
              Download
            </a>
          )}
          {isAdmin && !s.missing ? (
            <button
              type="button"
              aria-label={`Request restore of ${s.name}`}
              onClick={() => onOpen('restore')}
            >
              Request restore
            </button>
          ) : null}
          {isAdmin && !s.missing ? (
            <button
              type="button"
              aria-label={`${s.protected ? 'Unprotect' : 'Protect'} ${s.name}`}
              onClick={() => void protect(!s.protected)}
            >
              {s.protected ? 'Unprotect' : 'Protect'}
            </button>
          ) : null}
          {isAdmin && !s.protected ? (
            <button
              type="button"
              class="danger-outline"
              aria-label={`Delete ${s.name}`}
              onClick={() => onOpen('delete')}
            >
              Delete
            </button>
          ) : null}
        </div>
      </td>
    </tr>
  );
}
