import { loadStationConfig, type ServeFlags } from '../core/config.ts';
import { serveRole } from '../core/server.ts';
import { startStation } from '../station/app.ts';
import { paceGarbageCollection } from '../station/gc-pacing.ts';

export async function stationServe(flags: ServeFlags): Promise<void> {
  paceGarbageCollection();
  const config = loadStationConfig(flags);
  await serveRole({ ...config, role: 'station', start: () => startStation(config) });
}
