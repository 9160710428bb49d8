import { useSession } from '../session.tsx';
import { CertificatesSection } from './certificates-section.tsx';
import { HooksSection } from './hooks-section.tsx';
import { NotificationsSection } from './notifications-section.tsx';

/** Settings both roles share: notifications, hooks, trusted certificates. */
export function SettingsPage() {
  const { user } = useSession();
  return (
    <>
      <h1>Settings</h1>
      <NotificationsSection isAdmin={user.is_admin} />
      <HooksSection isAdmin={user.is_admin} />
      <CertificatesSection isAdmin={user.is_admin} />
    </>
  );
}
