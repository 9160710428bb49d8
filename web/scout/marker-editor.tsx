import { useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type {
  ChangeDetection,
  DirectorySaved,
  DirectoryView,
  JobConfigView,
} from '../../src/shared/protocol/scout-jobs.ts';
import { api } from '../common/api.ts';
import { Checkbox, ErrorText, Field, Notice, useAction } from '../common/ui.tsx';

/** Edits a folder's `.upload_dir` marker; saving replaces it (and makes the folder a job). */
export function MarkerEditor({
  relativePath,
  dir,
  onSaved,
  freshDays,
}: {
  relativePath: string;
  /** The job here, or undefined when the folder is not a job yet. */
  dir: DirectoryView | undefined;
  onSaved: (saved: DirectoryView) => unknown;
  /** The Scout's force_send_every_days, when known. */
  freshDays?: number;
}) {
  const config = dir?.config;
  const [jobName, setJobName] = useState(config?.job_name ?? '');
  const [includeHidden, setIncludeHidden] = useState(config?.include_hidden ?? true);
  const [followSymlinks, setFollowSymlinks] = useState(config?.follow_symlinks ?? false);
  const [exclude, setExclude] = useState((config?.exclude ?? []).join('\n'));
  const [detection, setDetection] = useState<ChangeDetection>(config?.change_detection ?? 'sizes');
  const [saved, setSaved] = useState<DirectoryView | null>(null);
  const action = useAction();
  const configError = saved ? saved.config_error : (dir?.config_error ?? null);

  return (
    <form
      aria-label="Job settings"
      onSubmit={async (event) => {
        event.preventDefault();
        setSaved(null);
        const next: Partial<JobConfigView> = {
          include_hidden: includeHidden,
          follow_symlinks: followSymlinks,
          change_detection: detection,
          exclude: exclude
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean),
        };
        if (jobName.trim()) next.job_name = jobName.trim();
        const reply = await action.run(() =>
          api.post<DirectorySaved>(scoutPaths.saveJob, {
            relative_path: relativePath,
            config: next,
          }),
        );
        if (!reply) return;
        setSaved(reply.directory);
        if (reply.directory.config) {
          setJobName(reply.directory.config.job_name);
          setExclude(reply.directory.config.exclude.join('\n'));
        }
        await onSaved(reply.directory);
      }}
    >
      {dir ? null : (
        <p>
          This folder is not a backup job yet. Saving writes a <code>.upload_dir</code> marker here, and the
          next cycle backs it up.
        </p>
      )}
      {configError ? (
        <p class="error" role="alert" data-testid="config-error">
          {saved
            ? 'Saved, but the job is not valid and will not run: '
            : 'The marker is not valid; the job does not run: '}
          {configError}
        </p>
      ) : null}
      <Field
        label="Job name"
        value={jobName}
        onInput={setJobName}
        placeholder="the folder's name"
        spellcheck={false}
        autoComplete="off"
        hint="Unique on this Scout; letters, digits, dots, dashes and underscores. The Station files snapshots under it."
      />
      <Checkbox
        label="Include hidden files and folders"
        checked={includeHidden}
        onChange={setIncludeHidden}
      />
      <Checkbox label="Follow symbolic links" checked={followSymlinks} onChange={setFollowSymlinks} />
      <div class="field">
        <label for="change-detection">What counts as a change</label>
        <select
          id="change-detection"
          value={detection}
          aria-describedby="change-detection-hint"
          onChange={(event) => setDetection((event.target as HTMLSelectElement).value as ChangeDetection)}
        >
          <option value="sizes">File names and sizes (sizes)</option>
          <option value="mtimes">Also modification times (mtimes)</option>
        </select>
        <small id="change-detection-hint" class="hint">
          With sizes, an edit that keeps a file's size (a database, a VM image, many documents) is not seen
          until the next fresh snapshot (Settings: every {freshDays ?? 7} days). With mtimes, any edit that
          touches the file's time makes a new snapshot.
        </small>
      </div>
      <div class="field">
        <label for="exclude-patterns">Exclude patterns</label>
        <textarea
          id="exclude-patterns"
          value={exclude}
          spellcheck={false}
          aria-describedby="exclude-patterns-hint"
          onInput={(event) => setExclude((event.target as HTMLTextAreaElement).value)}
        />
        <small id="exclude-patterns-hint" class="hint">
          One pattern per line, as in .gitignore: <code>*.tmp</code>, <code>cache/</code> (a trailing{' '}
          <code>/</code> matches folders only), <code>/build/</code> (only at the top of the job).
        </small>
      </div>
      <ErrorText error={action.error} />
      {saved && !saved.config_error ? <Notice>Saved. The next cycle uses these settings.</Notice> : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={action.busy}>
          {dir ? 'Save' : 'Make this folder a job'}
        </button>
      </div>
    </form>
  );
}
