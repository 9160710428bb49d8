import type { ComponentChildren } from 'preact';
import { useSession } from '../session.tsx';
import { CertificatesSection } from './certificates-section.tsx';
import { HooksSection } from './hooks-section.tsx';
import { NotificationsSection } from './notifications-section.tsx';

/** The one Settings page of an app: its own settings (`own`), then notifications, hooks, trusted certificates. */
export function SettingsPage({ own }: { own?: (() => ComponentChildren) | undefined }) {
  const { user } = useSession();
  return (
    <>
      <h1>Settings</h1>
      {own?.()}
      <NotificationsSection isAdmin={user.is_admin} />
      <HooksSection isAdmin={user.is_admin} />
      <CertificatesSection isAdmin={user.is_admin} />
    </>
  );
}
