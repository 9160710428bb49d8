/** Integrity verification: re-hash every stored snapshot; show the last result and each failure. */
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { VerifyResult } from '../../src/shared/protocol/snapshots.ts';
import { api } from '../common/api.ts';
import { formatBytes } from '../common/format.ts';
import { usePoll } from '../common/poll.ts';
import { ErrorText, Section, TableHead, Time, useAction } from '../common/ui.tsx';
import { Filename } from './names.tsx';

const PROBLEMS: Record<string, string> = {
  checksum_mismatch:
    "The file's SHA-256 differs from the one recorded when it was stored: its bytes changed on disk.",
  missing: 'The index lists the snapshot but its file is gone.',
  unreadable: 'The file is there but could not be read.',
  unindexed: 'A file in the snapshot folder that the index does not know.',
};

const STATUS: Record<string, { text: string; tone: string }> = {
  never_run: { text: 'Never run', tone: '' },
  running: { text: 'Running', tone: 'warn' },
  ok: { text: 'All snapshots intact', tone: 'ok' },
  failed: { text: 'Problems found', tone: 'bad' },
};

export function VerifyCard() {
  const poll = usePoll(() => api.get<VerifyResult>(stationPaths.verify), null);
  const run = useAction();
  const result = poll.data;
  const status = result ? (STATUS[result.status] ?? { text: result.status, tone: '' }) : null;

  return (
    <Section
      title="Integrity verification"
      actions={
        <button
          type="button"
          class="primary"
          disabled={run.busy}
          onClick={() =>
            void run.run(async () => {
              await api.post<VerifyResult>(stationPaths.verify);
              await poll.reload();
            })
          }
        >
          {run.busy ? 'Verifying…' : 'Run verification'}
        </button>
      }
    >
      <p class="muted">
        Reads every stored snapshot, compares its SHA-256 with the one recorded at upload and looks for files
        the index does not know. It takes as long as reading all snapshots once.
      </p>
      <ErrorText error={run.error ?? poll.error} />
      {result && status ? (
        <div data-testid="verify-result" aria-busy={run.busy}>
          <dl class="facts">
            <dt>Last result</dt>
            <dd>
              <span class={`badge ${status.tone}`} data-testid="verify-status">
                {status.text}
              </span>
            </dd>
            {result.status !== 'never_run' ? (
              <>
                <dt>Started</dt>
                <dd>
                  <Time value={result.started_at} />
                </dd>
                <dt>Finished</dt>
                <dd>
                  <Time value={result.finished_at} />
                </dd>
                <dt>Checked</dt>
                <dd>
                  {result.checked ?? 0} file{result.checked === 1 ? '' : 's'},{' '}
                  {formatBytes(result.bytes ?? 0)}
                </dd>
                <dt>Problems</dt>
                <dd>{result.failures?.length ?? 0}</dd>
              </>
            ) : null}
          </dl>
          {result.failures && result.failures.length > 0 ? (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Verification failures</caption>
                <TableHead columns={['Problem', 'Snapshot', 'Scout / instance / job']} />
                <tbody>
                  {result.failures.map((f) => (
                    <tr key={`${f.scout_id}/${f.scout_instance_id}/${f.job_name}/${f.filename}/${f.problem}`}>
                      <td>
                        <span class="badge bad">{f.problem}</span>
                        <br />
                        <small>{PROBLEMS[f.problem] ?? ''}</small>
                      </td>
                      <td>
                        <Filename name={f.filename} />
                      </td>
                      <td>
                        {f.scout_id} / <code>{f.scout_instance_id ?? '(legacy)'}</code> / {f.job_name}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </div>
      ) : null}
    </Section>
  );
}
