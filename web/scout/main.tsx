import '../common/style.css';
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
]);
