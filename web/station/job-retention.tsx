/** A job's own retention (overrides of the Station's settings), with what it would delete. */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { JobKey } from '../../src/shared/protocol/job-key.ts';
import type { Overview } from '../../src/shared/protocol/overview.ts';
import type { JobRetentionList, JobRetentionSaved } from '../../src/shared/protocol/retention.ts';
import type { StationSettingsView } from '../../src/shared/protocol/settings.ts';
import { api } from '../common/api.ts';
import { ErrorText, Field, Notice, useAction } from '../common/ui.tsx';
import { useRetentionPreview } from './retention-preview.tsx';
import { RETENTION_RULES } from './retention-rules.ts';

export function JobRetention({ job, onChanged }: { job: JobKey; onChanged: () => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [station, setStation] = useState<StationSettingsView | null>(null);
  const [saved, setSaved] = useState(false);
  const load = useAction();
  const save = useAction();
  const who = { scout_id: job.scoutId, scout_instance_id: job.instanceId, job_name: job.jobName };
  const body = () =>
    Object.fromEntries(
      Object.entries(values)
        .filter(([, text]) => text.trim() !== '')
        .map(([field, text]) => [field, Number.isFinite(Number(text)) ? Number(text) : text]),
    );

  useEffect(() => {
    void load.run(async () => {
      const [{ jobs }, overview] = await Promise.all([
        api.get<JobRetentionList>(stationPaths.retentionJobs),
        api.get<Required<Pick<Overview, 'settings'>>>(stationPaths.overview('settings')),
      ]);
      const own = jobs.find(
        (j) =>
          j.scout_id === job.scoutId && j.scout_instance_id === job.instanceId && j.job_name === job.jobName,
      );
      setStation(overview.settings);
      setValues(Object.fromEntries(Object.entries(own?.overrides ?? {}).map(([k, v]) => [k, String(v)])));
    });
  }, [job.scoutId, job.instanceId, job.jobName]);

  const preview = useRetentionPreview(values, () => ({ ...who, ...body() }), load);

  async function submit(event: Event) {
    event.preventDefault();
    setSaved(false);
    const answer = await save.run(() => api.post<JobRetentionSaved>(stationPaths.retentionJob(job), body()));
    if (answer) {
      setSaved(true);
      onChanged();
    }
  }

  const deleted = preview?.jobs[0]?.deleted.length ?? 0;
  return (
    <details class="job-retention">
      <summary>Retention of this job</summary>
      <form onSubmit={submit} noValidate>
        <p class="muted">Empty fields follow the Station's settings (shown greyed).</p>
        {RETENTION_RULES.map((rule) => (
          <Field
            key={rule.field}
            label={rule.label}
            id={`${rule.id}-${job.scoutId}-${job.instanceId}-${job.jobName}`}
            type="number"
            inputMode="numeric"
            placeholder={station ? String(station[rule.field]) : ''}
            value={values[rule.field] ?? ''}
            onInput={(text) => setValues({ ...values, [rule.field]: text })}
          />
        ))}
        <ErrorText error={save.error ?? load.error} />
        <p data-testid="job-retention-preview">
          {deleted === 0
            ? 'With this policy, no snapshot of this job would be deleted.'
            : `With this policy, ${deleted} snapshot${deleted === 1 ? '' : 's'} of this job would be deleted at its next upload.`}
        </p>
        {saved ? <Notice>Saved: the job's next upload applies it.</Notice> : null}
        <div class="actions">
          <button type="submit" class="primary" disabled={save.busy}>
            Save job retention
          </button>
        </div>
      </form>
    </details>
  );
}
