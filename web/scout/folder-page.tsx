import { useEffect, useRef, useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { Browse, DirectoryList } from '../../src/shared/protocol/scout-jobs.ts';
import { api } from '../common/api.ts';
import { usePoll } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Notice, Section } from '../common/ui.tsx';
import { FolderContents, FolderSize } from './folder-contents.tsx';
import { JobCard } from './job-card.tsx';
import { MarkerEditor } from './marker-editor.tsx';
import { OperationCard } from './operation.tsx';
import { baseName, folderUrl, JOBS } from './paths.ts';
import type { StatusPoll } from './status.ts';

function Crumbs({ relativePath }: { relativePath: string }) {
  const parts = relativePath === '.' ? [] : relativePath.split('/');
  const trail = [
    { label: 'Jobs', to: JOBS },
    { label: 'Scan root', to: folderUrl('.') },
    ...parts.map((part, i) => ({ label: part, to: folderUrl(parts.slice(0, i + 1).join('/')) })),
  ];
  return (
    <nav aria-label="Breadcrumb">
      <ol class="crumbs">
        {trail.map((crumb, i) => (
          <li key={crumb.to}>
            {i === trail.length - 1 ? (
              <span aria-current="page">{crumb.label}</span>
            ) : (
              <a href={crumb.to} onClick={(event) => linkClick(event, crumb.to)}>
                {crumb.label}
              </a>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/** One folder under the scan root: its job (if any), the marker editor, and what it holds. */
export function FolderPage({
  relativePath,
  status,
  dirs,
  reloadDirs,
}: {
  relativePath: string;
  status: StatusPoll;
  dirs: DirectoryList | null;
  reloadDirs: () => Promise<void>;
}) {
  const { user } = useSession();
  const [editorVersion, setEditorVersion] = useState(0);
  const browse = usePoll(() => api.get<Browse>(scoutPaths.browse(relativePath)), status.interval);
  const job = dirs?.directories.find((dir) => dir.relative_path === relativePath);
  const owner = browse.data?.job ?? null;
  const insideOther = owner !== null && owner !== relativePath;
  const refresh = () => Promise.all([browse.reload(), reloadDirs()]);
  // A deleted job leaves a fresh editor behind (for making the folder a job again).
  const isJob = job !== undefined;
  const wasJob = useRef(isJob);
  useEffect(() => {
    if (wasJob.current && !isJob) setEditorVersion((v) => v + 1);
    wasJob.current = isJob;
  }, [isJob]);

  return (
    <>
      <Crumbs relativePath={relativePath} />
      <h1 class="folder-title">{relativePath === '.' ? 'Scan root' : relativePath}</h1>
      <OperationCard status={status} />
      {job ? (
        <>
          <p id="run-now-hint" class="hint">
            Back up now backs up this job if its files changed; Force send uploads a fresh snapshot even when
            nothing seems changed.
          </p>
          <JobCard dir={job} status={status} onChanged={refresh} heading="h2" />
        </>
      ) : null}
      {insideOther ? (
        <Notice>
          This folder is inside the job at{' '}
          <a href={folderUrl(owner)} onClick={(event) => linkClick(event, folderUrl(owner))}>
            {baseName(owner)}
          </a>
          . Excluding an entry here adds a pattern to that job's marker.
        </Notice>
      ) : null}
      {user.is_admin && !insideOther && dirs !== null && browse.data !== null ? (
        <Section title="Job settings (.upload_dir)">
          <MarkerEditor
            key={`${editorVersion}`}
            relativePath={relativePath}
            dir={job}
            onSaved={refresh}
            freshDays={status.data?.settings?.force_send_every_days}
          />
        </Section>
      ) : null}
      <Section title="Contents" actions={<FolderSize relativePath={relativePath} />}>
        <ErrorText error={browse.error} />
        {browse.data ? (
          <FolderContents
            browse={browse.data}
            onExcluded={async () => {
              await refresh();
              setEditorVersion((v) => v + 1);
            }}
          />
        ) : browse.error ? null : (
          <p aria-busy="true">Loading…</p>
        )}
      </Section>
    </>
  );
}
