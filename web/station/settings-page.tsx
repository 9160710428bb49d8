/** The Station's own part of Settings: retention, what was set at start-up, integrity verification. */
import { useEffect, useState } from 'preact/hooks';
import { stationPaths } from '../../src/shared/protocol/api-paths.ts';
import type { Overview, OverviewStorage } from '../../src/shared/protocol/overview.ts';
import { api } from '../common/api.ts';
import { formatBytes } from '../common/format.ts';
import { Section, useAction } from '../common/ui.tsx';
import { RetentionCard } from './retention-card.tsx';
import { VerifyCard } from './verify-card.tsx';

export function StationSettingsSections() {
  const [storage, setStorage] = useState<OverviewStorage | null>(null);
  const load = useAction();

  useEffect(() => {
    void load.run(async () => {
      const withStorage = await api.get<Overview>(stationPaths.overview('storage'));
      setStorage(withStorage.storage ?? null);
    });
  }, []);

  return (
    <>
      <RetentionCard />
      {storage ? (
        <Section title="Set at start-up">
          <p class="muted">
            These come from the environment of <code>backupd station serve</code>.
          </p>
          <dl class="facts">
            <dt>Upload limit (MAX_UPLOAD_BYTES)</dt>
            <dd>{formatBytes(storage.max_upload_bytes)} per archive</dd>
            <dt>Snapshot folder (BACKUP_ROOT)</dt>
            <dd>
              <code>{storage.backup_root ?? '—'}</code>
            </dd>
            <dt>Staging folder (STAGING_DIR)</dt>
            <dd>
              <code>{storage.staging_dir ?? '—'}</code>
            </dd>
          </dl>
        </Section>
      ) : null}
      <VerifyCard />
    </>
  );
}
