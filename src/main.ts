#!/usr/bin/env node
import { Command } from 'commander';
import { runOrExit } from './cli/exit.ts';
import { buildInfo } from './core/build-info.ts';
import type { ServeFlags } from './core/config.ts';

const program = new Command('backupd')
  .description('Self-hosted, end-to-end encrypted backups: a Station stores snapshots, Scouts make them.')
  .version(
    `backupd ${buildInfo.version} (${buildInfo.commit})`,
    '-V, --version',
    'print the version and build commit',
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

const scout = program
  .command('scout')
  .description('the Scout: finds, packs, encrypts and uploads backup jobs');
scout.addCommand(
  serveCommand('scout', 6556).action((flags: ServeFlags) =>
    runOrExit(async () => (await import('./cli/scout-serve.ts')).scoutServe(flags)),
  ),
);

await program.parseAsync(process.argv);
