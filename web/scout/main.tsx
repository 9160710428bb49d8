import '../common/style.css';
import { commonPages } from '../common/pages/index.ts';
import { startApp } from '../common/shell.tsx';

startApp('backupd Scout', [
  {
    path: '/',
    label: 'Status',
    render: () => (
      <section class="card">
        <h1>Status</h1>
      </section>
    ),
  },
  ...commonPages(),
]);
