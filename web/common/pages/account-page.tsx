import { useState } from 'preact/hooks';
import { ChangePassword, useSession } from '../session.tsx';
import { Notice, Section } from '../ui.tsx';

/** The signed-in account: who it is, its password, and ending every session. */
export function AccountPage() {
  const session = useSession();
  const { user } = session;
  const [changed, setChanged] = useState(false);
  return (
    <>
      <h1>Your account</h1>
      <Section title="Signed in as">
        <dl class="facts">
          <dt>Username</dt>
          <dd>{user.username}</dd>
          <dt>Access</dt>
          <dd>{user.is_admin ? 'Admin' : 'Operator (no admin access)'}</dd>
        </dl>
      </Section>
      <Section title="Change your password">
        <p class="muted">
          At least 8 characters. Changing it signs out your other browser sessions; this one stays signed in.
        </p>
        <div class="narrow-form">
          <ChangePassword
            forced={false}
            onChanged={() => {
              setChanged(true);
              void session.refresh();
            }}
          />
        </div>
        {changed ? <Notice>Password changed. Your other browser sessions were signed out.</Notice> : null}
      </Section>
      <Section title="Sign out everywhere">
        <p>
          Ends every browser session of <strong>{user.username}</strong>, on every device, including this one.
          Use it when you signed in on a computer you no longer trust.
          {user.is_admin ? ' Automation tokens keep working: revoke those on the Tokens page.' : ''}
        </p>
        <button type="button" class="danger" onClick={() => void session.signOutEverywhere()}>
          Sign out of all sessions
        </button>
      </Section>
    </>
  );
}
