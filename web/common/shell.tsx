import type { ComponentChildren } from 'preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { SessionMe } from '../../src/shared/protocol/accounts.ts';
import { accountPaths } from '../../src/shared/protocol/api-paths.ts';
import { api, errorText, onSignedOut } from './api.ts';
import { linkClick, navigate, useLocationPath } from './router.ts';
import { ChangePassword, SessionContext, SignIn, type User } from './session.tsx';
import { ErrorText } from './ui.tsx';

export interface Page {
  /** The path it lives at; `/` is the home page. Sub-paths (`/jobs/...`) belong to it too. */
  path: string;
  label: string;
  adminOnly?: boolean;
  render: (subPath: string) => ComponentChildren;
}

function pageFor(pages: Page[], current: string): { page: Page; subPath: string } | null {
  const sorted = [...pages].sort((a, b) => b.path.length - a.path.length);
  for (const page of sorted) {
    if (page.path === '/' ? current === '/' : current === page.path || current.startsWith(`${page.path}/`)) {
      return { page, subPath: current.slice(page.path.length) };
    }
  }
  return null;
}

type SessionState =
  | { kind: 'loading' }
  | { kind: 'signed-out' }
  | { kind: 'signed-in'; user: User }
  | { kind: 'error'; message: string };

function Layout({ product, pages, user }: { product: string; pages: Page[]; user: User }) {
  const current = useLocationPath();
  const visible = pages.filter((page) => !page.adminOnly || user.is_admin);
  const match = pageFor(visible, current);
  // At phone width the navigation folds behind a menu button; going anywhere folds it again.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    document.title = match ? `${match.page.label} · ${product}` : product;
    setMenuOpen(false);
  }, [match?.page.label, product, current]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class={menuOpen ? 'top menu-open' : 'top'}>
        <strong class="brand">{product}</strong>
        <nav aria-label="Main">
          <button
            type="button"
            class="menu-button"
            aria-expanded={menuOpen}
            aria-controls="main-menu"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            {menuOpen ? 'Close menu' : 'Menu'}
          </button>
          <ul id="main-menu">
            {visible.map((page) => (
              <li key={page.path}>
                <a
                  href={page.path}
                  aria-current={match?.page === page ? 'page' : undefined}
                  onClick={(event) => linkClick(event, page.path)}
                >
                  {page.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <UserMenu user={user} />
      </header>
      <main id="main">
        {match ? (
          match.page.render(match.subPath)
        ) : (
          <section class="card">
            <h1>Not found</h1>
            <p>
              Nothing lives at <code>{current}</code>.{' '}
              <a href="/" onClick={(event) => linkClick(event, '/')}>
                Back to the start
              </a>
              .
            </p>
          </section>
        )}
      </main>
    </>
  );
}

function UserMenu({ user }: { user: User }) {
  const session = sessionActions();
  return (
    <div class="user-menu">
      <span>
        Signed in as <strong>{user.username}</strong>
      </span>
      <button type="button" onClick={() => void session.signOut()}>
        Sign out
      </button>
      <button
        type="button"
        onClick={() => void session.signOutEverywhere()}
        title="Ends every browser session of this account"
      >
        Sign out everywhere
      </button>
    </div>
  );
}

let setSessionState: (state: SessionState) => void = () => {};

function sessionActions() {
  return {
    async signOut() {
      await api.post(accountPaths.logout).catch(() => undefined);
      setSessionState({ kind: 'signed-out' });
    },
    async signOutEverywhere() {
      await api.post(accountPaths.logoutAll).catch(() => undefined);
      setSessionState({ kind: 'signed-out' });
    },
  };
}

function App({ product, pages }: { product: string; pages: Page[] }) {
  const [state, setState] = useState<SessionState>({ kind: 'loading' });
  setSessionState = setState;
  async function refresh() {
    try {
      const me = await api.get<SessionMe>(accountPaths.me, {
        quiet401: true,
      });
      setState(me.authenticated && me.user ? { kind: 'signed-in', user: me.user } : { kind: 'signed-out' });
    } catch (error) {
      setState({ kind: 'error', message: errorText(error) });
    }
  }
  useEffect(() => {
    void refresh();
    return onSignedOut(() => setState({ kind: 'signed-out' }));
  }, []);

  if (state.kind === 'loading') return <main class="centered" aria-busy="true" />;
  if (state.kind === 'error') {
    return (
      <main class="centered">
        <div class="card narrow">
          <h1>{product}</h1>
          <ErrorText error={state.message} />
          <button type="button" onClick={() => void refresh()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (state.kind === 'signed-out') {
    return <SignIn product={product} onSignedIn={(user) => setState({ kind: 'signed-in', user })} />;
  }
  if (state.user.must_change_password) {
    return (
      <main class="centered">
        <ChangePassword forced onChanged={(user) => setState({ kind: 'signed-in', user })} />
      </main>
    );
  }
  const actions = sessionActions();
  return (
    <SessionContext.Provider value={{ user: state.user, refresh, ...actions }}>
      <Layout product={product} pages={pages} user={state.user} />
    </SessionContext.Provider>
  );
}

/** Starts an app: the session gate, the navigation and the pages. */
export function startApp(product: string, pages: Page[]): void {
  const root = document.getElementById('app');
  if (!root) throw new Error('no #app element');
  render(<App product={product} pages={pages} />, root);
}

export { navigate };
