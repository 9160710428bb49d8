/** Snapshot sizes of one job, oldest to newest, as a small inline SVG (no chart library). */
import { formatBytes, localTime } from '../common/format.ts';
import type { Snapshot } from './types.ts';

const W = 192;
const H = 30;
const PAD = 3;

export function SizeChart({ jobName, snapshots }: { jobName: string; snapshots: Snapshot[] }) {
  const shown = snapshots.filter((s) => !s.missing);
  if (shown.length === 0) return null;
  const max = Math.max(...shown.map((s) => s.size_bytes), 1);
  const min = Math.min(...shown.map((s) => s.size_bytes));
  const step = shown.length > 1 ? (W - 2 * PAD) / (shown.length - 1) : 0;
  const points = shown.map((s, i) => ({
    s,
    x: shown.length > 1 ? PAD + i * step : W / 2,
    // From zero, so a halving looks like one.
    y: H - PAD - (s.size_bytes / max) * (H - 2 * PAD),
  }));
  const unusual = shown.filter((s) => s.unusual).length;
  const label =
    `Sizes of the ${shown.length} snapshots of ${jobName}, oldest to newest: ` +
    `${formatBytes(min)} to ${formatBytes(max)}, newest ${formatBytes(shown.at(-1)?.size_bytes)}` +
    (unusual ? `; ${unusual} unusual` : '');
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} data-testid="size-chart">
      <title>{label}</title>
      <line class="base" x1={PAD} x2={W - PAD} y1={H - PAD} y2={H - PAD} />
      {points.length > 1 ? <polyline points={points.map((p) => `${p.x},${p.y}`).join(' ')} /> : null}
      {points.map((p) => (
        <circle
          key={p.s.name}
          class={p.s.unusual ? 'unusual' : undefined}
          cx={p.x}
          cy={p.y}
          r={p.s.unusual ? 3 : 2}
        >
          <title>
            {`${p.s.name}: ${formatBytes(p.s.size_bytes)}${p.s.mtime ? `, ${localTime(p.s.mtime)}` : ''}${p.s.unusual ? ' (unusual)' : ''}`}
          </title>
        </circle>
      ))}
    </svg>
  );
}
