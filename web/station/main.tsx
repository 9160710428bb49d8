import '../common/style.css';
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
]);
