/**
 * API answers name the field they refuse ("new_password must be at least 8 characters"): right
 * for scripts, odd on a form. The UIs show such a detail in words, with the API name after it
 * in small print (it is what the README and the API use). Only the field at the start of a
 * detail is replaced; everything else is shown as the server wrote it.
 */
const WORDS: Record<string, string> = {
  username: 'The username',
  password: 'The password',
  current_password: 'The current password',
  new_password: 'The new password',
  confirm_new_password: 'The confirmation of the new password',
  station_url: 'The Station URL',
  scout_credential: 'The Station token',
  scout_id: 'The Scout ID',
  cron_schedule: 'The backup schedule',
  drill_schedule: 'The drill schedule',
  force_send_every_days: 'The days between fresh snapshots',
  job_name: 'The job name',
};

/** `detail` with its leading API field name in words, and that name; `field` null when none. */
export function inWords(detail: string): { text: string; field: string | null } {
  // "field rest", or as a request check words it, "field: field rest" / "field: rest".
  const match = /^([a-z][a-z0-9_]*)(?:(?::\s+\1)?\s|(:\s))(.*)$/s.exec(detail);
  const field = match?.[1] ?? '';
  const words = WORDS[field];
  if (!match || !words) return { text: detail, field: null };
  return { text: `${words}${match[2] ? ': ' : ' '}${match[3]}`, field };
}
