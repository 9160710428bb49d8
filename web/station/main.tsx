import '../common/style.css';
import { commonPages } from '../common/pages/index.ts';
import { startApp } from '../common/shell.tsx';

startApp('backupd Station', [
  {
    path: '/',
    label: 'Overview',
    render: () => (
      <section class="card">
        <h1>Overview</h1>
      </section>
    ),
  },
  ...commonPages(),
]);
