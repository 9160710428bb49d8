/**
 * What a hook may see of the server's environment: where programs are, the user, the language
 * and the time zone, and nothing else. The server's environment holds secrets
 * (AWS_SECRET_ACCESS_KEY, DATABASE_URL, SCOUT_CREDENTIAL, INITIAL_ADMIN_PASSWORD, …) that an
 * admin's shell command has no business reading, or printing into a file or a log. Listed for
 * operators in the README (Hooks).
 */
const PASSED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR'];
/** LC_ALL, LC_CTYPE, LC_TIME, …: the locale's parts. */
const LOCALE = /^LC_[A-Z_]+$/;
/** PATH when the server has none (systemd always sets one). */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The hook's environment: the passed names from `server`, then the event's facts as BACKUPD_*. */
export function hookEnvironment(
  facts: Record<string, string | number | undefined>,
  server: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_PATH };
  for (const [name, value] of Object.entries(server)) {
    if (value !== undefined && (PASSED.includes(name) || LOCALE.test(name))) env[name] = value;
  }
  for (const [key, value] of Object.entries(facts)) {
    if (value !== undefined) env[`BACKUPD_${key.toUpperCase()}`] = String(value);
  }
  return env;
}
