#!/usr/bin/env node
// First: refuses an old Node in one line, before any built-in it lacks is loaded.
import './core/node-version.ts';
import { Command } from 'commander';
import { runOrExit } from './cli/exit.ts';
import type { MoveDatabaseFlags } from './cli/station-move-database.ts';
import type { MoveStorageFlags } from './cli/station-move-storage.ts';
import { buildInfo } from './core/build-info.ts';
import type { ServeFlags } from './core/config.ts';

// Before anything is created, in every subcommand: what backupd writes is its own user's only
// unless it sets the mode itself (restored entries, job markers); src/core/private-files.ts.
process.umask(0o077);

const program = new Command('backupd')
  .description('Self-hosted, end-to-end encrypted backups: a Station stores snapshots, Scouts make them.')
  .version(
    `backupd ${buildInfo.version} (${buildInfo.commit}) ${process.platform}-${process.arch}`,
    '-V, --version',
    'print the version, build commit and platform',
  );

function serveCommand(role: 'station' | 'scout', defaultPort: number) {
  return new Command('serve')
    .description(`run the ${role === 'station' ? 'Station' : 'Scout'} service (web UI and HTTP API)`)
    .option('--host <host>', 'address to listen on (HOST; default 0.0.0.0)')
    .option('--port <port>', `port to listen on (PORT; default ${defaultPort})`)
    .option('--data-dir <dir>', `state folder (DATA_DIR; default $STATE_DIRECTORY or ./data/${role})`);
}

const station = program.command('station').description('the Station: stores encrypted snapshots');
station.addCommand(
  serveCommand('station', 6555).action((flags: ServeFlags) =>
    runOrExit(async () => (await import('./cli/station-serve.ts')).stationServe(flags)),
  ),
);

station
  .command('move-database')
  .description('copy the embedded database into an empty PostgreSQL database (Station stopped)')
  .requiredOption('--to <url>', 'the PostgreSQL database, postgres://user:password@host:port/db')
  .option('--data-dir <dir>', 'the Station data dir (DATA_DIR; default $STATE_DIRECTORY or ./data/station)')
  .action((flags: MoveDatabaseFlags) =>
    runOrExit(async () => (await import('./cli/station-move-database.ts')).stationMoveDatabase(flags)),
  );

station
  .command('move-storage')
  .description(
    'copy the snapshots of the disk store into an S3 bucket, checking each SHA-256 (Station stopped)',
  )
  .requiredOption('--to <url>', 's3://BUCKET[/PREFIX]; S3_ENDPOINT, AWS_ACCESS_KEY_ID, … as for STORAGE_URL')
  .option('--data-dir <dir>', 'the Station data dir (DATA_DIR; default $STATE_DIRECTORY or ./data/station)')
  .action((flags: MoveStorageFlags) =>
    runOrExit(async () => (await import('./cli/station-move-storage.ts')).stationMoveStorage(flags)),
  );

const scout = program
  .command('scout')
  .description('the Scout: finds, packs, encrypts and uploads backup jobs');
scout.addCommand(
  serveCommand('scout', 6556)
    .option(
      '--instance-id <id>',
      "on a fresh data dir only: continue this instance's history (SCOUT_INSTANCE_ID; the ID from the Station's dashboard)",
    )
    .addHelpText(
      'after',
      `
Environment:
  SCAN_ROOT         the folder whose sub-folders are backed up (default /scan); mark each
                    folder to back up with an empty .upload_dir file, or in the web UI
  STATION_URL       the Station to upload to (or set it in the web UI's Settings)
  SCOUT_CREDENTIAL  a Station token minted on the Station's "Station tokens" page
  SCOUT_ID          the name snapshots are filed under on the Station (default: host name)
  CRON_SCHEDULE     when backups run (default "0 * * * *": every hour)
The README lists every variable.`,
    )
    .action((flags: ServeFlags) =>
      runOrExit(async () => (await import('./cli/scout-serve.ts')).scoutServe(flags)),
    ),
);

scout
  .command('restore')
  .description("restore one job's snapshot into a folder, without a running Scout (disaster recovery)")
  .option('--job <name>', 'the job name (required unless --list alone, which lists the jobs)')
  .option('--dest <dir>', 'the folder to restore into (created if missing; required unless --list)')
  .option('--station-url <url>', 'the Station (default: the Scout settings in --data-dir, or STATION_URL)')
  .option(
    '--token <token>',
    'a Station token bound to the instance (default: from --data-dir, or SCOUT_CREDENTIAL)',
  )
  .option('--scout-id <id>', 'the Scout ID the snapshot belongs to (default: from --data-dir, or SCOUT_ID)')
  .option('--instance-id <id>', 'the Scout instance ID (default: from --data-dir)')
  .option('--fingerprint <hex>', 'the newest snapshot with this job fingerprint (8 or 64 hex)')
  .option('--file <filename>', 'exactly this snapshot file')
  .option(
    '--key-file <path>',
    'the key file saved by the Scout console\'s "Download key file" (an age identity file: every key in it is tried; a bare key_base64 works too); "-" reads standard input',
  )
  .option(
    '--key <key_base64>',
    'the Scout key on the command line (key_base64 or AGE-SECRET-KEY-1…); other users see it in ps: prefer --key-file',
  )
  .option('--data-dir <dir>', "an existing Scout's data dir: its key, keyring and settings")
  .option('--archive <path>', 'decrypt a local archive instead of downloading')
  .option('--dry-run', 'list what would be added, replaced or left unchanged, write nothing')
  .option(
    '--path <path>',
    'restore only this file or folder (relative to the job folder, names escaped as \\xHH; repeatable); it lands at --dest/<path>',
    (value: string, previous: string[] = []) => [...previous, value],
  )
  .option('--list-files', "print the snapshot's entries (sizes, names) and exit; writes nothing")
  .option(
    '--list',
    "print the job's snapshots on the Station (newest first: time, size, fingerprint, file) and exit; without --job, the jobs",
  )
  .addHelpText(
    'after',
    `
Example (a rebuilt host; IDs from the Station's dashboard, a recovery token minted there):
  backupd scout restore --job photos --dest /srv/photos \\
    --station-url https://backup.example.org --token <recovery token> \\
    --scout-id old-host --instance-id <instance ID> \\
    --key-file scout-key.txt`,
  )
  .action((flags) => runOrExit(async () => (await import('./cli/scout-restore.ts')).scoutRestore(flags)));

// Internal: initdb for a fresh embedded database, run in a child process by the Station.
program.addCommand(
  new Command('__pglite-init')
    .argument('<dir>')
    .action((dir: string) =>
      runOrExit(async () => (await import('./station/db/pglite-init.ts')).initCluster(dir)),
    ),
  { hidden: true },
);

// Not a top-level await: the single executable runs this bundle as CommonJS.
void program.parseAsync(process.argv);
