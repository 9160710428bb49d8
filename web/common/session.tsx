import { createContext } from 'preact';
import { useContext, useState } from 'preact/hooks';
import type {
  ChangePasswordBody,
  LoginBody,
  PublicUser,
  SignedIn,
} from '../../src/shared/protocol/accounts.ts';
import { accountPaths } from '../../src/shared/protocol/api-paths.ts';
import { api } from './api.ts';
import { ErrorText, Field, useAction } from './ui.tsx';

/** The signed-in account. */
export type User = PublicUser;

export interface SessionValue {
  user: User;
  /** Re-reads the signed-in account (accountPaths.me) after a change that affects it. */
  refresh: () => Promise<void>;
  signOut: () => Promise<void>;
  signOutEverywhere: () => Promise<void>;
}

export const SessionContext = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside the signed-in shell');
  return value;
}

export function SignIn({ product, onSignedIn }: { product: string; onSignedIn: (user: User) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  return (
    <main class="centered">
      <form
        class="card narrow"
        aria-label="Sign in"
        onSubmit={async (event) => {
          event.preventDefault();
          const result = await action.run(() =>
            api.post<SignedIn>(accountPaths.login, { username, password } satisfies LoginBody, {
              quiet401: true,
            }),
          );
          if (result) onSignedIn(result.user);
        }}
      >
        <h1>{product}</h1>
        <Field label="Username" value={username} onInput={setUsername} autoComplete="username" required />
        <Field
          label="Password"
          type="password"
          value={password}
          onInput={setPassword}
          autoComplete="current-password"
          required
        />
        <ErrorText error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

/** The forced password change on first sign-in; nothing else is reachable until it is done. */
export function ChangePassword({ forced, onChanged }: { forced: boolean; onChanged: (user: User) => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const action = useAction();
  return (
    <form
      class={forced ? 'card narrow' : ''}
      aria-label="Change password"
      onSubmit={async (event) => {
        event.preventDefault();
        const result = await action.run(() =>
          api.post<SignedIn>(accountPaths.changePassword, {
            current_password: current,
            new_password: next,
            confirm_new_password: confirm,
          } satisfies ChangePasswordBody),
        );
        if (result) {
          setCurrent('');
          setNext('');
          setConfirm('');
          onChanged(result.user);
        }
      }}
    >
      {forced ? (
        <>
          <h1>Choose a new password</h1>
          <p>This account still has its first password. Choose your own before anything else.</p>
        </>
      ) : null}
      <Field
        label="Current password"
        type="password"
        value={current}
        onInput={setCurrent}
        autoComplete="current-password"
        required
      />
      <Field
        label="New password"
        type="password"
        value={next}
        onInput={setNext}
        autoComplete="new-password"
        required
      />
      <Field
        label="Confirm new password"
        type="password"
        value={confirm}
        onInput={setConfirm}
        autoComplete="new-password"
        required
      />
      <ErrorText error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        Change password
      </button>
    </form>
  );
}
