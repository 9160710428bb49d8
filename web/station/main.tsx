import '../common/style.css';
import './station.css';
import { commonPages } from '../common/pages/index.ts';
import { startApp } from '../common/shell.tsx';
import { OverviewPage } from './overview-page.tsx';
import { ReplicationSettingsSection } from './replication-settings.tsx';
import { RestoresPage } from './restores-page.tsx';
import { StationSettingsSections } from './settings-page.tsx';
import { TokensPage } from './tokens-page.tsx';

startApp('backupd Station', [
  { path: '/', label: 'Overview', render: () => <OverviewPage /> },
  { path: '/station-tokens', label: 'Station tokens', adminOnly: true, render: () => <TokensPage /> },
  { path: '/restores', label: 'Restore requests', render: () => <RestoresPage /> },
  ...commonPages(
    () => (
      <>
        <StationSettingsSections />
        <ReplicationSettingsSection />
      </>
    ),
    [
      {
        name: 'replicate',
        text: 'for a replica Station only: list and download every snapshot, nothing else (no upload, delete or settings)',
      },
    ],
  ),
]);
