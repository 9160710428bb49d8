/**
 * Snapshot sizes of one job, oldest to newest, as a small inline SVG (no chart library): one
 * line through every size, a dot only on the newest and on unusual snapshots, so a job with
 * hundreds of snapshots is still a handful of nodes.
 */
import type { OverviewSnapshot } from '../../src/shared/protocol/overview.ts';
import { formatBytes, localTime } from '../common/format.ts';

const W = 192;
const H = 30;
const PAD = 3;

export function SizeChart({ jobName, snapshots }: { jobName: string; snapshots: OverviewSnapshot[] }) {
  const shown = snapshots.filter((s) => !s.missing);
  if (shown.length === 0) return null;
  let max = 1;
  let min = Number.POSITIVE_INFINITY;
  for (const s of shown) {
    max = Math.max(max, s.size_bytes);
    min = Math.min(min, s.size_bytes);
  }
  const step = shown.length > 1 ? (W - 2 * PAD) / (shown.length - 1) : 0;
  const points = shown.map((s, i) => ({
    s,
    x: shown.length > 1 ? PAD + i * step : W / 2,
    // From zero, so a halving looks like one.
    y: H - PAD - (s.size_bytes / max) * (H - 2 * PAD),
  }));
  const newest = points.at(-1);
  const dots = points.filter((p) => p.s.unusual || p === newest);
  const unusual = shown.filter((s) => s.unusual).length;
  const label =
    `Sizes of the ${shown.length} snapshots of ${jobName}, oldest to newest: ` +
    `${formatBytes(min)} to ${formatBytes(max)}, newest ${formatBytes(newest?.s.size_bytes)}` +
    (unusual ? `; ${unusual} unusual` : '');
  const round = (n: number) => Math.round(n * 10) / 10;
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} data-testid="size-chart">
      <title>{label}</title>
      <line class="base" x1={PAD} x2={W - PAD} y1={H - PAD} y2={H - PAD} />
      {points.length > 1 ? (
        <polyline points={points.map((p) => `${round(p.x)},${round(p.y)}`).join(' ')} />
      ) : null}
      {dots.map((p) => (
        <circle
          key={p.s.name}
          class={p.s.unusual ? 'unusual' : undefined}
          cx={round(p.x)}
          cy={round(p.y)}
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
