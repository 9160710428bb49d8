import { useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { DrillRunBody } from '../../src/shared/protocol/drills.ts';
import type { DirectoryList } from '../../src/shared/protocol/scout-jobs.ts';
import type { OperationReply } from '../../src/shared/protocol/scout-status.ts';
import { api } from '../common/api.ts';
import { usePoll } from '../common/poll.ts';
import { ErrorText, Notice, Section, useAction } from '../common/ui.tsx';
import { FolderPage } from './folder-page.tsx';
import { FolderTree } from './folder-tree.tsx';
import { JobCard } from './job-card.tsx';
import { OperationCard } from './operation.tsx';
import { folderOf } from './paths.ts';
import { useScoutStatus, useWhenIdle } from './status.ts';

/** `/jobs`: every job with its last result and actions, and the folders under the scan root. */
export function JobsPage({ subPath }: { subPath: string }) {
  const status = useScoutStatus();
  const dirs = usePoll(() => api.get<DirectoryList>(scoutPaths.directories), status.interval);
  useWhenIdle(status.busy, () => void dirs.reload());
  const drillAll = useAction();
  const [drillQueued, setDrillQueued] = useState(false);
  useWhenIdle(status.busy, () => setDrillQueued(false));
  const folder = folderOf(subPath);
  if (folder !== null) {
    return (
      <FolderPage
        key={folder}
        relativePath={folder}
        status={status}
        dirs={dirs.data}
        reloadDirs={dirs.reload}
      />
    );
  }
  const list = dirs.data;
  return (
    <>
      <h1>Jobs</h1>
      <OperationCard status={status} />
      <Section
        title="Backup jobs"
        actions={
          <button
            type="button"
            disabled={drillAll.busy}
            onClick={async () => {
              setDrillQueued(false);
              const reply = await drillAll.run(() =>
                api.post<OperationReply>(scoutPaths.runDrills, {} satisfies DrillRunBody),
              );
              if (reply?.status === 'already_running')
                drillAll.setError(
                  'Drill all jobs: an operation is already running; nothing extra was scheduled.',
                );
              else if (reply) setDrillQueued(true);
              await Promise.all([status.reload(), dirs.reload()]);
            }}
          >
            Drill all jobs
          </button>
        }
      >
        <p id="run-now-hint" class="hint">
          Back up now backs up that one job if its files changed (Status has Back up all jobs now). Force send
          uploads a fresh snapshot of the job even when nothing seems changed. A restore drill reads a job's
          newest snapshot back from the Station to the end, writing nothing, to prove it restores.
        </p>
        {drillQueued && status.busy ? (
          <Notice>Restore drill of every job with a snapshot started.</Notice>
        ) : null}
        <ErrorText error={drillAll.error} />
        <ErrorText error={dirs.error} />
        {list?.discovering ? <Notice>Still searching the scan root for jobs…</Notice> : null}
        {list === null ? (
          dirs.error ? null : (
            <p aria-busy="true">Loading…</p>
          )
        ) : list.directories.length === 0 ? (
          <p>
            No jobs yet. A job is a folder under the scan root with a <code>.upload_dir</code> marker: open a
            folder below and make it a job.
          </p>
        ) : (
          <div class="jobs">
            {list.directories.map((dir) => (
              <JobCard key={dir.relative_path} dir={dir} status={status} onChanged={dirs.reload} />
            ))}
          </div>
        )}
      </Section>
      <Section title="Folders under the scan root">
        <FolderTree directories={list?.directories ?? []} />
      </Section>
    </>
  );
}
