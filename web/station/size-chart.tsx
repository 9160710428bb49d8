/**
 * Snapshot sizes of one job, oldest to newest, as a small inline SVG (no chart library): one
 * line through the sizes of its newest snapshots (GET /api/jobs's `recent_sizes`), a dot only on
 * the newest and on unusual ones, so a job is a handful of nodes.
 */

import type { JobSummary } from '../../src/shared/protocol/jobs.ts';
import { formatBytes, localTime } from '../common/format.ts';

const W = 192;
const H = 30;
const PAD = 3;

export function SizeChart({ job }: { job: JobSummary }) {
  const sizes = job.recent_sizes;
  if (sizes.length === 0) return null;
  const unusualAt = new Set(job.recent_unusual);
  let max = 1;
  let min = Number.POSITIVE_INFINITY;
  for (const size of sizes) {
    max = Math.max(max, size);
    min = Math.min(min, size);
  }
  const step = sizes.length > 1 ? (W - 2 * PAD) / (sizes.length - 1) : 0;
  const points = sizes.map((size, i) => ({
    i,
    size,
    x: sizes.length > 1 ? PAD + i * step : W / 2,
    // From zero, so a halving looks like one.
    y: H - PAD - (size / max) * (H - 2 * PAD),
  }));
  const newest = points.at(-1);
  const dots = points.filter((p) => unusualAt.has(p.i) || p === newest);
  const which =
    job.snapshot_count > sizes.length
      ? `newest ${sizes.length} of the ${job.snapshot_count}`
      : `${sizes.length}`;
  const label =
    `Sizes of the ${which} snapshots of ${job.job_name}, oldest to newest: ` +
    `${formatBytes(min)} to ${formatBytes(max)}, newest ${formatBytes(newest?.size)}` +
    (unusualAt.size ? `; ${unusualAt.size} unusual` : '');
  const round = (n: number) => Math.round(n * 10) / 10;
  const dotTitle = (p: (typeof points)[number]) =>
    p === newest && job.newest
      ? `${job.newest.name}: ${formatBytes(p.size)}${job.newest.mtime ? `, ${localTime(job.newest.mtime)}` : ''}${unusualAt.has(p.i) ? ' (unusual)' : ''}`
      : `${formatBytes(p.size)} (unusual)`;
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} data-testid="size-chart">
      <title>{label}</title>
      <line class="base" x1={PAD} x2={W - PAD} y1={H - PAD} y2={H - PAD} />
      {points.length > 1 ? (
        <polyline points={points.map((p) => `${round(p.x)},${round(p.y)}`).join(' ')} />
      ) : null}
      {dots.map((p) => (
        <circle
          key={p.i}
          class={unusualAt.has(p.i) ? 'unusual' : undefined}
          cx={round(p.x)}
          cy={round(p.y)}
          r={unusualAt.has(p.i) ? 3 : 2}
        >
          <title>{dotTitle(p)}</title>
        </circle>
      ))}
    </svg>
  );
}
