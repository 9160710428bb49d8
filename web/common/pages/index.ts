import './pages.css';
import { type ComponentChildren, h } from 'preact';
import type { Page } from '../shell.tsx';
import { AccountPage } from './account-page.tsx';
import { AccountsPage } from './accounts-page.tsx';
import { SettingsPage } from './settings-page.tsx';
import { type ExtraScope, TokensPage } from './tokens-page.tsx';

/**
 * The pages both apps share: Settings (the app's own settings from `ownSettings`, then
 * notifications, hooks, trusted certificates: one Settings page per app),
 * Accounts (all of them for an admin, one's own otherwise), Automation tokens (admins) and
 * Your account (own password, signing out everywhere): one name per page, never two alike.
 */
export function commonPages(ownSettings?: () => ComponentChildren, extraScopes: ExtraScope[] = []): Page[] {
  return [
    { path: '/settings', label: 'Settings', render: () => h(SettingsPage, { own: ownSettings }) },
    { path: '/accounts', label: 'Accounts', render: () => h(AccountsPage, null) },
    {
      path: '/tokens',
      label: 'Automation tokens',
      adminOnly: true,
      render: () => h(TokensPage, { extraScopes }),
    },
    { path: '/account', label: 'Your account', render: () => h(AccountPage, null) },
  ];
}
