/**
 * A cron expression in plain words, for the common shapes ("every hour, on the hour",
 * "every day at 02:30", "Sundays at 04:00"); null for anything else (the expression is then
 * shown alone). Five fields: minute hour day-of-month month day-of-week, as node-cron reads them.
 */
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const NUMBER = /^\d{1,2}$/;
const pad = (n: number) => String(n).padStart(2, '0');
const day = (text: string) => DAYS[Number(text) % 7];

/** "Sundays", "Mondays and Thursdays", "Monday to Friday"; null when not a plain list or range. */
function weekdays(field: string): string | null {
  const range = /^(\d)-(\d)$/.exec(field);
  if (range) return `${day(range[1] ?? '')} to ${day(range[2] ?? '')}`;
  const parts = field.split(',');
  if (!parts.every((p) => /^\d$/.test(p) && Number(p) <= 7)) return null;
  const names = parts.map((p) => `${day(p)}s`);
  return names.length === 1 ? (names[0] ?? null) : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

export function describeCron(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  const every = /^\*\/(\d+)$/;
  if (every.test(minute) && hour === '*' && dom === '*' && month === '*' && dow === '*') {
    const n = Number(every.exec(minute)?.[1]);
    return n === 1 ? 'every minute' : `every ${n} minutes`;
  }
  if (!NUMBER.test(minute)) return null;
  const m = Number(minute);
  if (hour === '*' && dom === '*' && month === '*' && dow === '*')
    return m === 0 ? 'every hour, on the hour' : `every hour at :${pad(m)}`;
  if (every.test(hour) && dom === '*' && month === '*' && dow === '*')
    return `every ${every.exec(hour)?.[1]} hours at :${pad(m)}`;
  if (!NUMBER.test(hour)) return null;
  const at = `${pad(Number(hour))}:${pad(m)}`;
  if (dom === '*' && month === '*') {
    if (dow === '*') return `every day at ${at}`;
    const days = weekdays(dow);
    return days ? `${days} at ${at}` : null;
  }
  if (NUMBER.test(dom) && dow === '*') {
    if (month === '*') return `on day ${Number(dom)} of every month at ${at}`;
    if (NUMBER.test(month)) {
      const name = MONTHS[Number(month) - 1];
      return name ? `on ${Number(dom)} ${name} at ${at}` : null;
    }
  }
  return null;
}
