import { loadStationConfig, type ServeFlags } from '../core/config.ts';
import { serveRole } from '../core/server.ts';
import { startStation } from '../station/app.ts';

export async function stationServe(flags: ServeFlags): Promise<void> {
  const config = loadStationConfig(flags);
  await serveRole({ ...config, role: 'station', start: () => startStation(config) });
}
