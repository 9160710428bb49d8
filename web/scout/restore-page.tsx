import { useEffect, useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { ListedSnapshot, RestoreProblemView } from '../../src/shared/protocol/recovery.ts';
import type { DirectoryList, DirectoryView } from '../../src/shared/protocol/scout-jobs.ts';
import type {
  AlreadyRunning,
  JobSnapshotList,
  RestoreBody,
  RestoreOutcome,
  RestorePreview,
} from '../../src/shared/protocol/scout-recovery.ts';
import { api } from '../common/api.ts';
import { ConfirmDialog } from '../common/dialog.tsx';
import { formatBytes, localTime } from '../common/format.ts';
import { usePoll } from '../common/poll.ts';
import { useSession } from '../common/session.tsx';
import { ErrorText, Notice, Section, useAction } from '../common/ui.tsx';
import { OperationCard } from './operation.tsx';
import { jobLabel } from './paths.ts';
import { RestoreRequests } from './restore-requests.tsx';
import { type StatusPoll, useScoutStatus } from './status.ts';

/** Entries a restore left out or restored in part: the first ones, and how many in all. */
function Problems({
  count,
  problems,
  would,
}: {
  count: number;
  problems: RestoreProblemView[];
  would?: boolean;
}) {
  if (count === 0) return null;
  return (
    <div class="restore-problems" role="alert">
      <p>
        {count} {count === 1 ? 'entry' : 'entries'} {would ? 'would not be restored' : 'not restored'} (or
        only in part):
      </p>
      <ul>
        {problems.map((p) => (
          <li key={`${p.path}\0${p.message}`}>
            <code>{p.path}</code>: {p.message}
          </li>
        ))}
        {count > problems.length ? (
          <li>… and {count - problems.length} more (the Scout's log lists all)</li>
        ) : null}
      </ul>
    </div>
  );
}

const SHOWN = 200;

/** The job's snapshots on the Station, asked for again when the job changes. */
function useSnapshots(relativePath: string | undefined) {
  const [list, setList] = useState<{ path: string; snapshots: ListedSnapshot[] } | null>(null);
  const load = useAction();
  useEffect(() => {
    if (!relativePath) return;
    setList(null);
    void load.run(async () => {
      const reply = await api.get<JobSnapshotList>(scoutPaths.recoverySnapshots(relativePath));
      setList({ path: relativePath, snapshots: reply.snapshots });
    });
  }, [relativePath]);
  return {
    snapshots: list && list.path === relativePath ? list.snapshots : null,
    error: load.error,
    busy: load.busy,
  };
}

/** Re-reads the status once the operation has begun, so its progress shows (and polls faster). */
function watch(status: StatusPoll): void {
  setTimeout(() => void status.reload(), 300);
}
const BUSY = 'Another operation is running; wait for it to end (or cancel it), then try again.';

function PathList({ title, paths, count }: { title: string; paths: string[]; count: number }) {
  return (
    <details open={count > 0 && count <= 50}>
      <summary>
        {title} ({count})
      </summary>
      {count === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="paths" aria-label={title}>
          {paths.slice(0, SHOWN).map((path) => (
            <li key={path}>
              <code>{path}</code>
            </li>
          ))}
          {count > SHOWN ? <li class="muted">and {count - SHOWN} more</li> : null}
        </ul>
      )}
    </details>
  );
}

/** Entries shown in the file picker at most (the CLI's --path takes any). */
const PICKABLE = 500;

/** The snapshot's files and the folders they lie in, sorted so a folder comes before its contents. */
function snapshotEntries(preview: RestorePreview): { path: string; folder: boolean; depth: number }[] {
  const files = [...preview.add, ...preview.replace, ...preview.unchanged];
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i += 1) folders.add(parts.slice(0, i).join('/'));
  }
  const all = [
    ...[...folders].map((path) => ({ path, folder: true })),
    ...files.map((path) => ({ path, folder: false })),
  ];
  all.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return all.map((e) => ({ ...e, depth: e.path.split('/').length - 1 }));
}

/** Checkboxes for the snapshot's files and folders: a checked folder takes its whole subtree. */
function FilePicker({
  preview,
  chosen,
  setChosen,
}: {
  preview: RestorePreview;
  chosen: string[];
  setChosen: (paths: string[]) => void;
}) {
  const entries = snapshotEntries(preview);
  const covered = (path: string) => chosen.some((c) => path === c || path.startsWith(`${c}/`));
  return (
    <details class="file-picker" open>
      <summary>
        Choose files or folders (
        {chosen.length === 0 ? 'none chosen: the whole snapshot' : `${chosen.length} chosen`})
      </summary>
      <ul class="paths" aria-label="Files in the snapshot">
        {entries.slice(0, PICKABLE).map((entry) => (
          <li key={entry.path} style={{ paddingLeft: `${entry.depth * 1.25}em` }}>
            <label class="check">
              <input
                type="checkbox"
                checked={covered(entry.path)}
                disabled={!chosen.includes(entry.path) && covered(entry.path)}
                onChange={(event) => {
                  const on = (event.target as HTMLInputElement).checked;
                  const rest = chosen.filter((c) => c !== entry.path && !c.startsWith(`${entry.path}/`));
                  setChosen(on ? [...rest, entry.path] : rest);
                }}
              />{' '}
              <code>{entry.folder ? `${entry.path}/` : entry.path}</code>
            </label>
          </li>
        ))}
        {entries.length > PICKABLE ? (
          <li class="muted">
            and {entries.length - PICKABLE} more (choose their folder, or use{' '}
            <code>backupd scout restore --path</code>)
          </li>
        ) : null}
      </ul>
      {chosen.length > 0 ? (
        <button type="button" onClick={() => setChosen([])}>
          Clear the choice
        </button>
      ) : null}
    </details>
  );
}

/** Preview and restore of one job's snapshot (the latest, or one picked from the Station's list). */
function LocalRestore({ jobs, status }: { jobs: DirectoryView[]; status: StatusPoll }) {
  const [path, setPath] = useState('');
  const [which, setWhich] = useState<'latest' | 'picked'>('latest');
  const [picked, setPicked] = useState('');
  const [preview, setPreview] = useState<{ key: string; result: RestorePreview } | null>(null);
  const [restored, setRestored] = useState<RestoreOutcome | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [chosen, setChosen] = useState<string[]>([]);
  const [destination, setDestination] = useState('');
  /** The whole snapshot's preview (job and snapshot as key): the files the picker offers. */
  const [whole, setWhole] = useState<{ key: string; result: RestorePreview } | null>(null);
  const action = useAction();
  const selected = jobs.find((job) => job.relative_path === path) ?? jobs[0];
  const listed = useSnapshots(selected?.relative_path);
  const choice = listed.snapshots?.find((s) => s.filename === picked) ?? listed.snapshots?.[0];
  const filename = which === 'picked' ? choice?.filename : undefined;
  const snapshotKey = `${selected?.relative_path}|${filename ?? ''}`;
  const picking = whole?.key === snapshotKey ? whole.result : null;
  const paths = picking ? chosen : [];
  const dest = destination.trim();
  const key = `${snapshotKey}|${paths.join('\0')}|${dest}`;
  const current = preview?.key === key ? preview.result : null;
  const target = dest || selected?.relative_path;
  const body = (): RestoreBody => ({
    relative_path: selected?.relative_path ?? '',
    ...(filename ? { filename } : {}),
    ...(paths.length > 0 ? { paths } : {}),
    ...(dest ? { destination: dest } : {}),
  });

  async function restore(): Promise<void> {
    setRestored(null);
    const started = api.post<RestoreOutcome | AlreadyRunning>(scoutPaths.restore, body());
    watch(status);
    const reply = await started;
    if (reply.status === 'already_running') throw new Error(BUSY);
    setRestored(reply);
    setPreview(null);
  }

  if (jobs.length === 0) return <p>No job can be restored yet: make a job on the Jobs page first.</p>;
  return (
    <form
      aria-label="Restore a job"
      onSubmit={async (event) => {
        event.preventDefault();
        setRestored(null);
        const started = api.post<RestorePreview | AlreadyRunning>(scoutPaths.preview, body());
        watch(status);
        const reply = await action.run(() => started);
        if (!reply) return;
        if (reply.status === 'already_running') action.setError(BUSY);
        else {
          setPreview({ key, result: reply });
          if (paths.length === 0) {
            if (whole?.key !== snapshotKey) setChosen([]);
            setWhole({ key: snapshotKey, result: reply });
          }
        }
      }}
    >
      <div class="field">
        <label for="restore-job">Job</label>
        <select
          id="restore-job"
          value={selected?.relative_path}
          onChange={(event) => setPath((event.target as HTMLSelectElement).value)}
        >
          {jobs.map((job) => (
            <option key={job.relative_path} value={job.relative_path}>
              {jobLabel(job)} ({job.relative_path})
            </option>
          ))}
        </select>
      </div>
      <fieldset class="snapshot-choice">
        <legend>Snapshot</legend>
        <label class="check">
          <input type="radio" name="which" checked={which === 'latest'} onChange={() => setWhich('latest')} />{' '}
          The latest
          {selected?.state.last_stored_as ? (
            <span class="muted">
              {' '}
              (this Scout last uploaded <code>{selected.state.last_stored_as}</code>)
            </span>
          ) : null}
        </label>
        <label class="check">
          <input
            type="radio"
            name="which"
            checked={which === 'picked'}
            disabled={!listed.snapshots?.length}
            onChange={() => setWhich('picked')}
          />{' '}
          This snapshot:
        </label>
        <div class="field">
          <select
            aria-label="Snapshot on the Station"
            aria-describedby="snapshot-hint"
            value={choice?.filename ?? ''}
            disabled={!listed.snapshots?.length}
            onFocus={() => setWhich('picked')}
            onChange={(event) => {
              setPicked((event.target as HTMLSelectElement).value);
              setWhich('picked');
            }}
          >
            {(listed.snapshots ?? []).map((snapshot) => (
              <option key={snapshot.filename} value={snapshot.filename}>
                {localTime(snapshot.timestamp)} · {formatBytes(snapshot.size_bytes)}
                {snapshot.fingerprint ? ` · ${snapshot.fingerprint.slice(0, 8)}` : ''}
              </option>
            ))}
          </select>
          <small id="snapshot-hint" class="hint">
            {listed.busy
              ? 'Asking the Station for the snapshots of this job…'
              : listed.snapshots?.length === 0
                ? 'The Station holds no snapshot of this job for this Scout yet.'
                : 'Newest first, by the time each snapshot was taken. Snapshots made before a key rotation need the key they were made with; this Scout keeps its old keys.'}
          </small>
          <ErrorText error={listed.error} />
        </div>
      </fieldset>
      <div class="field">
        <label for="restore-destination">Restore into another folder</label>
        <input
          id="restore-destination"
          type="text"
          placeholder="/srv/restored (empty: the job folder)"
          value={destination}
          aria-describedby="destination-hint"
          onInput={(event) => setDestination((event.target as HTMLInputElement).value)}
        />
        <small id="destination-hint" class="hint">
          An absolute folder on this host, made if missing; files land there at their paths in the job (
          <code>keep/one.txt</code> → <code>{dest || '/srv/restored'}/keep/one.txt</code>). API name:{' '}
          <code>destination</code>.
        </small>
      </div>
      {picking ? (
        <FilePicker preview={picking} chosen={chosen} setChosen={setChosen} />
      ) : (
        <p class="hint">Preview the snapshot to choose files or folders from it.</p>
      )}
      <p class="hint">
        A restore puts {paths.length > 0 ? 'the chosen files and folders' : 'the whole snapshot'} back into{' '}
        <code>{target}</code>: files that differ are replaced, identical ones are left as they are, files that
        are not in the snapshot are left alone.
      </p>
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Previewing…' : 'Preview'}
        </button>
        <button
          type="button"
          class="primary"
          disabled={action.busy}
          onClick={async () => {
            if (current && current.replace_count === 0) await action.run(restore);
            else setConfirming(true);
          }}
        >
          Restore…
        </button>
      </div>
      <ErrorText error={action.error} />
      {current ? (
        <section class="preview" aria-label="Preview">
          <h3>
            Preview of <code>{current.snapshot}</code>
          </h3>
          <p data-testid="preview-summary">
            {current.add_count} {current.add_count === 1 ? 'file' : 'files'} would be added,{' '}
            {current.replace_count} replaced ({formatBytes(current.bytes)}), {current.unchanged_count ?? 0}{' '}
            unchanged.
          </p>
          <PathList title="Added" paths={current.add} count={current.add_count} />
          <PathList
            title="Replaced (content or metadata differ)"
            paths={current.replace}
            count={current.replace_count}
          />
          <PathList
            title="Unchanged (identical: not rewritten)"
            paths={current.unchanged ?? []}
            count={current.unchanged_count ?? 0}
          />
          <Problems count={current.problem_count ?? 0} problems={current.problems ?? []} would />
        </section>
      ) : null}
      {restored ? (
        <Notice>
          Restored <code>{restored.snapshot}</code>: {restored.added} added, {restored.replaced} replaced,{' '}
          {restored.unchanged} unchanged ({formatBytes(restored.bytes)}) into{' '}
          <code>{restored.destination}</code>.
          <Problems count={restored.problem_count ?? 0} problems={restored.problems ?? []} />
        </Notice>
      ) : null}
      {confirming ? (
        <ConfirmDialog
          title={`Restore ${selected ? jobLabel(selected) : ''}?`}
          confirmLabel="Restore"
          onClose={() => setConfirming(false)}
          onConfirm={restore}
        >
          <p>
            The{' '}
            {filename ? (
              <>
                snapshot <code>{filename}</code>
              </>
            ) : (
              'latest snapshot'
            )}{' '}
            is downloaded and{' '}
            {paths.length > 0
              ? `${paths.length} chosen ${paths.length === 1 ? 'path is' : 'paths are'}`
              : 'it is'}{' '}
            written into <code>{target}</code>.
          </p>
          <p>
            {current ? (
              <>
                <strong>
                  {current.replace_count} existing {current.replace_count === 1 ? 'file is' : 'files are'}{' '}
                  replaced
                </strong>{' '}
                by the snapshot's version and {current.add_count} added.
              </>
            ) : (
              <strong>
                Files with the same paths as in the snapshot are replaced by the snapshot's version.
              </strong>
            )}{' '}
            Files that are not in the snapshot are left alone.
          </p>
        </ConfirmDialog>
      ) : null}
    </form>
  );
}

/** `/restore`: restore a job here, and answer the Station's restore requests. */
export function RestorePage() {
  const { user } = useSession();
  const status = useScoutStatus();
  const dirs = usePoll(() => api.get<DirectoryList>(scoutPaths.directories), null);
  const jobs = (dirs.data?.directories ?? []).filter((dir) => dir.config !== null);
  return (
    <>
      <h1>Restore</h1>
      <OperationCard status={status} />
      {user.is_admin ? (
        <Section title="Restore a job from the Station">
          <ErrorText error={dirs.error} />
          {dirs.data ? <LocalRestore jobs={jobs} status={status} /> : dirs.error ? null : <p>Loading…</p>}
        </Section>
      ) : null}
      <RestoreRequests status={status} />
    </>
  );
}
