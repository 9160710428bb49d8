import '../common/style.css';
import './scout.css';
import { commonPages } from '../common/pages/index.ts';
import { startApp } from '../common/shell.tsx';
import { JobsPage } from './jobs-page.tsx';
import { KeyPage } from './key-page.tsx';
import { JOBS } from './paths.ts';
import { RestorePage } from './restore-page.tsx';
import { ScoutSettingsSection } from './settings-page.tsx';
import { StatusPage } from './status-page.tsx';

startApp('backupd Scout', [
  { path: '/', label: 'Status', render: () => <StatusPage /> },
  { path: JOBS, label: 'Jobs', render: (subPath) => <JobsPage subPath={subPath} /> },
  { path: '/restore', label: 'Restore', render: () => <RestorePage /> },
  { path: '/key', label: 'Scout key', adminOnly: true, render: () => <KeyPage /> },
  ...commonPages(() => <ScoutSettingsSection />),
]);
