// The upload suites, registered on one database by uploads.pglite.test.ts and
// uploads.postgres.test.ts.
import type { Database } from '../../helpers/database-runner.ts';
import { onDatabase } from '../../helpers/database-runner.ts';
import { backupAbuseSuite } from './backup-abuse-suite.ts';
import { reservationsSuite } from './reservations-suite.ts';
import { socketReadsSuite } from './socket-reads-suite.ts';
import { streamedUploadSuite } from './streamed-upload-suite.ts';
import { uploadFlowSuite } from './upload-flow-suite.ts';
import { uploadRecoverySuite } from './upload-recovery-suite.ts';
import { uploadRulesSuite } from './upload-rules-suite.ts';
import { uploadValidationSuite } from './upload-validation-suite.ts';

export function uploadSuites(database: Database): void {
  onDatabase(database, 'uploads', (stationOn, on) => {
    uploadFlowSuite(on('upload flow'), (name, env) => stationOn(`upload_flow_${name}`, { env }));
    uploadValidationSuite(on('upload validation and limits'), (name, env) =>
      stationOn(`upload_validation_${name}`, { env }),
    );
    uploadRulesSuite(on('unusual snapshots and retention'), (name, env) =>
      stationOn(`upload_rules_${name}`, { env }),
    );
    uploadRecoverySuite(on('disk space, crash and abandoned uploads'), (name, env) =>
      stationOn(`upload_recovery_${name}`, { env }),
    );
    reservationsSuite(on('staging reservations'), (options) => stationOn('reservations', options));
    streamedUploadSuite(on('streamed uploads'), (name, env) => stationOn(`streamed_upload_${name}`, { env }));
    socketReadsSuite(on('chunks read from their socket'), (name, env) =>
      stationOn(`socket_reads_${name}`, { env }),
    );
    // On PostgreSQL two Stations share the database: the request limit and the drill
    // de-duplication live there, so they hold across both.
    backupAbuseSuite(
      on(database === 'postgres' ? 'hostile Station token (two Stations)' : 'hostile Station token'),
      async () =>
        database === 'postgres'
          ? [await stationOn('abuse'), await stationOn('abuse')]
          : [await stationOn('abuse')],
    );
  });
}
