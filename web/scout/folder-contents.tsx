import { useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type {
  Browse,
  BrowseEntry,
  DirectoryPathBody,
  FolderSizeView,
} from '../../src/shared/protocol/scout-jobs.ts';
import { api, errorText } from '../common/api.ts';
import { formatBytes } from '../common/format.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Time, useAction } from '../common/ui.tsx';
import { folderUrl } from './paths.ts';

function reasonText(reason: string | null): string {
  if (reason === 'marker') return "the job's marker";
  if (reason === 'hidden') return 'hidden (hidden files are not included)';
  return reason ? `pattern ${reason}` : '';
}

function EntryRow({
  entry,
  inJob,
  onExclude,
}: {
  entry: BrowseEntry;
  inJob: boolean;
  onExclude: (entry: BrowseEntry) => Promise<void>;
}) {
  const { user } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const isDir = entry.type === 'dir';
  return (
    <tr class={entry.excluded ? 'excluded' : undefined}>
      <td>
        {isDir ? (
          <a
            href={folderUrl(entry.relative_path)}
            onClick={(event) => linkClick(event, folderUrl(entry.relative_path))}
          >
            {entry.name}/
          </a>
        ) : (
          <span>{entry.name}</span>
        )}
        {entry.type === 'symlink' ? <span class="muted"> (symlink)</span> : null}
        <ErrorText error={error} />
      </td>
      <td class="num">{isDir ? '' : formatBytes(entry.size)}</td>
      <td class="wide-only">{entry.mtime ? <Time value={entry.mtime} /> : '—'}</td>
      <td>
        {!inJob ? (
          <span class="muted">not in a job</span>
        ) : entry.excluded ? (
          <>
            <span class="badge warn">excluded</span>{' '}
            <small class="muted">{reasonText(entry.exclusion_reason)}</small>
          </>
        ) : (
          <span class="muted">included</span>
        )}
      </td>
      <td>
        {inJob && !entry.excluded && user.is_admin ? (
          <button
            type="button"
            class="small"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              setError(null);
              try {
                await onExclude(entry);
              } catch (err) {
                setError(errorText(err));
              } finally {
                setBusy(false);
              }
            }}
          >
            Exclude<span class="visually-hidden"> {entry.name}</span>
          </button>
        ) : null}
      </td>
    </tr>
  );
}

/** What a folder holds, each entry marked included or excluded by its job's marker. */
export function FolderContents({
  browse,
  onExcluded,
}: {
  browse: Browse;
  onExcluded: () => Promise<unknown>;
}) {
  const inJob = browse.job !== null;
  if (browse.entries.length === 0) return <p class="muted">This folder is empty.</p>;
  return (
    <div class="table-wrap">
      <table class="contents">
        <caption class="visually-hidden">Contents of {browse.relative_path}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col" class="wide-only">
              Modified
            </th>
            <th scope="col">Backup</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {browse.entries.map((entry) => (
            <EntryRow
              key={entry.relative_path}
              entry={entry}
              inJob={inJob}
              onExclude={async (target) => {
                await api.post(scoutPaths.exclude, {
                  relative_path: target.relative_path,
                } satisfies DirectoryPathBody);
                await onExcluded();
              }}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The folder's size on disk, on request (a large folder takes a while to add up). */
export function FolderSize({ relativePath }: { relativePath: string }) {
  const action = useAction();
  const [size, setSize] = useState<{ bytes: number; files: number } | null>(null);
  return (
    <div class="row">
      <button
        type="button"
        disabled={action.busy}
        onClick={async () => {
          const reply = await action.run(() => api.get<FolderSizeView>(scoutPaths.size(relativePath)));
          if (reply) setSize(reply);
        }}
      >
        {action.busy ? 'Adding up…' : size ? 'Recalculate size' : 'Calculate size'}
      </button>
      {size ? (
        <span data-testid="folder-size">
          {formatBytes(size.bytes)} in {size.files} {size.files === 1 ? 'file' : 'files'} (excluded files
          included)
        </span>
      ) : null}
      <ErrorText error={action.error} />
    </div>
  );
}
