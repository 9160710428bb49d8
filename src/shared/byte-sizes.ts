/** Binary units, as every size is shown to people (CLI, API sentences and both web UIs). */
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** `512 B`, `1.07 KiB`, `146.5 MiB`: two decimals below 10, one above; `—` when unknown. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(Math.abs(value) < 10 ? 2 : 1)} ${UNITS[unit]}`;
}
