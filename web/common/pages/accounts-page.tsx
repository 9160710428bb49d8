import { useState } from 'preact/hooks';
import type {
  CreateUserBody,
  UpdateUserBody,
  UserList,
  UserReply,
} from '../../../src/shared/protocol/accounts.ts';
import { accountPaths } from '../../../src/shared/protocol/api-paths.ts';
import { api } from '../api.ts';
import { ConfirmDialog, Dialog, DialogActions } from '../dialog.tsx';
import { usePoll } from '../poll.ts';
import { linkClick } from '../router.ts';
import { type User, useSession } from '../session.tsx';
import { Checkbox, ErrorText, Field, Notice, Section, TableHead, useAction } from '../ui.tsx';

const PASSWORD_HINT = 'At least 8 characters. They choose their own password when they first sign in.';

/** Accounts: an admin sees, creates, edits and deletes all of them; anyone else sees their own. */
export function AccountsPage() {
  const session = useSession();
  const me = session.user;
  const users = usePoll(() => api.get<UserList>(accountPaths.users), null);
  const [editing, setEditing] = useState<User | null>(null);
  const [deleting, setDeleting] = useState<User | null>(null);
  const list = users.data?.users ?? [];
  const admins = list.filter((u) => u.is_admin).length;
  const build = users.data?.build;

  return (
    <>
      <h1>Accounts</h1>
      <Section title={me.is_admin ? 'All accounts' : 'Your account'}>
        <ErrorText error={users.error} />
        {me.is_admin && admins === 1 ? (
          <p class="muted">
            There is one admin account. It cannot be deleted or lose admin access until another account is an
            admin.
          </p>
        ) : null}
        <div class="table-wrap">
          <table>
            <TableHead columns={['Username', 'Access', 'Actions']} />
            <tbody>
              {list.map((account) => (
                <tr key={account.id}>
                  <td>
                    <strong>{account.username}</strong>
                    {account.id === me.id ? <span class="muted"> (you)</span> : null}
                  </td>
                  <td>
                    <span class={`badge${account.is_admin ? ' ok' : ''}`}>
                      {account.is_admin ? 'Admin' : 'Operator'}
                    </span>
                    {account.must_change_password ? (
                      <div class="small warn-text">Must choose a new password at next sign-in</div>
                    ) : null}
                  </td>
                  <td>
                    <div class="actions">
                      <button
                        type="button"
                        aria-label={`Edit ${account.username}`}
                        onClick={() => setEditing(account)}
                      >
                        Edit
                      </button>
                      {me.is_admin ? (
                        <button
                          type="button"
                          class="danger-outline"
                          aria-label={`Delete ${account.username}`}
                          disabled={account.is_admin && admins === 1}
                          title={
                            account.is_admin && admins === 1
                              ? 'The last admin account cannot be deleted: make another account an admin first'
                              : undefined
                          }
                          onClick={() => setDeleting(account)}
                        >
                          Delete
                        </button>
                      ) : null}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {build?.version ? (
          <p class="muted">
            backupd {build.version}
            {build.commit ? ` (${build.commit})` : ''}
          </p>
        ) : null}
      </Section>
      {me.is_admin ? <CreateAccount onCreated={() => void users.reload()} /> : null}
      {editing ? (
        <EditAccount
          account={editing}
          me={me}
          onClose={() => setEditing(null)}
          onSaved={async () => {
            await users.reload();
            if (editing.id === me.id) await session.refresh();
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete ${deleting.username}?`}
          confirmLabel="Delete account"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await api.delete(accountPaths.user(deleting.id));
            await users.reload();
          }}
        >
          <p>
            The account <strong>{deleting.username}</strong> is deleted at once: its browser sessions end and
            its automation tokens stop working. This cannot be undone.
          </p>
          {deleting.id === me.id ? <p>This is your own account: you are signed out.</p> : null}
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function CreateAccount({ onCreated }: { onCreated: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [isAdmin, setIsAdmin] = useState(false);
  const [created, setCreated] = useState<string | null>(null);
  const action = useAction();
  return (
    <Section title="Create an account">
      <form
        aria-label="Create an account"
        onSubmit={async (event) => {
          event.preventDefault();
          setCreated(null);
          const reply = await action.run(() =>
            api.post<UserReply>(accountPaths.users, {
              username,
              password,
              is_admin: isAdmin,
            } satisfies CreateUserBody),
          );
          if (!reply) return;
          setCreated(reply.user.username);
          setUsername('');
          setPassword('');
          setIsAdmin(false);
          onCreated();
        }}
      >
        <div class="grid">
          <Field
            id="new-account-username"
            label="Username"
            value={username}
            onInput={setUsername}
            autoComplete="off"
            hint='Letters, digits, ".", "_", "@" or "-".'
            required
          />
          <Field
            id="new-account-password"
            label="Initial password"
            type="password"
            value={password}
            onInput={setPassword}
            autoComplete="new-password"
            hint={PASSWORD_HINT}
            required
          />
        </div>
        <Checkbox
          label="Admin: may change settings, accounts and automation tokens"
          checked={isAdmin}
          onChange={setIsAdmin}
        />
        <ErrorText error={action.error} />
        {created ? (
          <Notice>
            Created {created}. They sign in with the initial password and then choose their own.
          </Notice>
        ) : null}
        <button type="submit" class="primary" disabled={action.busy}>
          Create account
        </button>
      </form>
    </Section>
  );
}

function EditAccount({
  account,
  me,
  onClose,
  onSaved,
}: {
  account: User;
  me: User;
  onClose: () => void;
  onSaved: () => Promise<void>;
}) {
  const own = account.id === me.id;
  const [username, setUsername] = useState(account.username);
  const [password, setPassword] = useState('');
  const [isAdmin, setIsAdmin] = useState(account.is_admin);
  const action = useAction();
  return (
    <Dialog title={`Edit ${account.username}`} onClose={onClose}>
      <form
        aria-label={`Edit ${account.username}`}
        onSubmit={async (event) => {
          event.preventDefault();
          const patch: UpdateUserBody = {};
          if (username !== account.username) patch.username = username;
          if (!own && password !== '') patch.password = password;
          if (me.is_admin && isAdmin !== account.is_admin) patch.is_admin = isAdmin;
          if (Object.keys(patch).length === 0) return onClose();
          const saved = await action.run(async () => {
            await api.put(accountPaths.user(account.id), patch);
            return true;
          });
          if (!saved) return;
          onClose();
          await onSaved();
        }}
      >
        <Field
          id="edit-account-username"
          label="Username"
          value={username}
          onInput={setUsername}
          autoComplete="off"
          required
        />
        {own ? (
          <p class="muted">
            Change your own password on the{' '}
            <a
              href="/account"
              onClick={(event) => {
                onClose();
                linkClick(event, '/account');
              }}
            >
              Your account
            </a>{' '}
            page.
          </p>
        ) : me.is_admin ? (
          <Field
            id="edit-account-password"
            label="New password"
            type="password"
            value={password}
            onInput={setPassword}
            autoComplete="new-password"
            hint={`Leave empty to keep the current one. A new one ends their sessions. ${PASSWORD_HINT}`}
          />
        ) : null}
        {me.is_admin ? (
          <Checkbox
            label="Admin: may change settings, accounts and automation tokens"
            checked={isAdmin}
            onChange={setIsAdmin}
          />
        ) : null}
        <DialogActions error={action.error} busy={action.busy} onCancel={onClose}>
          Save changes
        </DialogActions>
      </form>
    </Dialog>
  );
}
