/** The lock on a snapshot: protected by an admin, and/or under S3 Object Lock until a date. */
import type { OverviewSnapshot } from '../../src/shared/protocol/overview.ts';
import { Time } from '../common/ui.tsx';

export function LockBadges({ snapshot: s }: { snapshot: OverviewSnapshot }) {
  return (
    <>
      {s.protected ? (
        <span
          class="badge ok"
          title="An admin protected it: retention never deletes it; unprotect it to delete it"
        >
          Protected
        </span>
      ) : null}{' '}
      {s.locked_until && Date.parse(s.locked_until) > Date.now() ? (
        <span class="note">
          <span
            class="badge"
            title="S3 Object Lock: the bucket refuses to delete its object before this date"
          >
            Locked until
          </span>{' '}
          <small>
            <Time value={s.locked_until} />
          </small>
        </span>
      ) : null}
    </>
  );
}
