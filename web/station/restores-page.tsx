/** `/restores`: restore requests and their state. */
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { RestoreRequestRecordList } from '../../src/shared/protocol/restore-requests.ts';
import { api } from '../common/api.ts';
import { usePoll } from '../common/poll.ts';
import { linkClick } from '../common/router.ts';
import { ErrorText, Section, TableHead, Time } from '../common/ui.tsx';
import { Filename } from './names.tsx';

const TONES: Record<string, string> = {
  pending: 'warn',
  accepted: 'ok',
  completed: 'ok',
  rejected: 'bad',
  expired: '',
};

const MEANINGS: Record<string, string> = {
  pending: 'Waiting for the target Scout to accept or reject it.',
  accepted: 'The target Scout accepted it and may download the snapshot.',
  completed: 'The target Scout restored the snapshot.',
  rejected: 'The target Scout rejected it, or the restore failed.',
  expired: 'Not completed within one hour of its creation; ask again if still needed.',
};

const loadRequests = () => api.get<RestoreRequestRecordList>(stationPaths.restoreRequests);

export function RestoresPage() {
  const poll = usePoll(loadRequests, 15_000);
  const listing = poll.data;
  return (
    <>
      <h1>Restore requests</h1>
      <p>
        A restore request offers one stored snapshot to a Scout instance, which accepts or rejects it. Create
        one with <strong>Request restore</strong> beside a snapshot on the{' '}
        <a href="/" onClick={(event) => linkClick(event, '/')}>
          Overview
        </a>
        . A request expires one hour after creation.
      </p>
      <ErrorText error={poll.error} />
      <Section title="Requests">
        {listing && listing.requests.length === 0 ? <p class="muted">No restore requests.</p> : null}
        {listing && listing.requests.length > 0 ? <RequestTable listing={listing} /> : null}
      </Section>
    </>
  );
}

function RequestTable({ listing }: { listing: RestoreRequestRecordList }) {
  return (
    <div class="table-wrap">
      <table class="stack restore-list">
        <TableHead columns={['Created', 'Snapshot', 'From', 'To', 'State']} />
        <tbody>
          {listing.requests.map((r) => {
            // The Station reports `expired` itself; the list is re-read every 15 s.
            const status = r.status;
            return (
              <tr key={r.id} data-request-id={r.id}>
                <td class="nowrap" data-label="Created">
                  <Time value={r.created_at} />
                </td>
                <td class="notes" data-label="Snapshot">
                  {r.job_name}: <Filename name={r.filename} />
                </td>
                <td class="notes" data-label="From">
                  {r.source_scout_id} / <code>{r.source_instance_id}</code>
                </td>
                <td class="notes" data-label="To">
                  {r.target_scout_id} / <code>{r.target_instance_id}</code>
                </td>
                <td data-label="State">
                  <span
                    class={`badge ${TONES[status] ?? ''}`}
                    title={MEANINGS[status]}
                    data-testid="restore-status"
                  >
                    {status}
                  </span>
                  {status === 'pending' || status === 'accepted' ? (
                    <small class="muted">
                      {' '}
                      expires{' '}
                      <Time
                        value={r.expires_at ?? new Date(Date.parse(r.created_at) + 3_600_000).toISOString()}
                      />
                    </small>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
