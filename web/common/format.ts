/** Numbers and times as people read them: sizes in binary units, times local and relative. */

import { formatBytes } from '../../src/shared/byte-sizes.ts';

export { formatBytes };

export function formatRate(bytesPerSecond: number | null | undefined): string {
  if (!bytesPerSecond) return '—';
  return `${formatBytes(bytesPerSecond)}/s`;
}

function toDate(value: string | number | Date): Date {
  if (value instanceof Date) return value;
  // Numbers from the APIs are Unix seconds.
  if (typeof value === 'number') return new Date(value < 1e12 ? value * 1000 : value);
  return new Date(value);
}

/** "3 h ago", "in 5 min", "just now". */
export function relativeTime(value: string | number | Date, now = Date.now()): string {
  const seconds = Math.round((toDate(value).getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  const [amount, unit] =
    abs < 3600
      ? [Math.round(abs / 60), 'min']
      : abs < 86400
        ? [Math.round(abs / 3600), 'h']
        : abs < 86400 * 60
          ? [Math.round(abs / 86400), 'd']
          : [Math.round(abs / (86400 * 30)), 'mo'];
  return seconds < 0 ? `${amount} ${unit} ago` : `in ${amount} ${unit}`;
}

/** "20:48" today, "24 Nov, 20:48" on another day: when something happened, briefly. */
export function shortTime(value: string | number | Date, now = new Date()): string {
  const date = toDate(value);
  const time = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  if (date.toDateString() === now.toDateString()) return time;
  return `${date.toLocaleDateString([], { day: 'numeric', month: 'short' })}, ${time}`;
}

export function localTime(value: string | number | Date): string {
  return toDate(value).toLocaleString();
}

export function ageSeconds(value: string | number | Date, now = Date.now()): number {
  return (now - toDate(value).getTime()) / 1000;
}
