// The one plain line a person who starts a server at a terminal reads: where to open the web
// UI and how to sign in. It goes to stderr and only when stderr is a terminal, so the JSON log
// lines on stdout stay the only output under systemd, Docker or a pipe.

/** The address a browser on this machine opens for a server listening on `host`. */
function browserHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

export function firstRunLine(role: 'station' | 'scout', host: string, port: number, note?: string): string {
  const name = role === 'station' ? 'Station' : 'Scout';
  const url = `http://${browserHost(host)}:${port}`;
  const signIn =
    'sign in as admin (the first time with the password "admin", or INITIAL_ADMIN_PASSWORD if you set it; you then choose your own)';
  return `backupd ${name} is running: open ${url} in a browser and ${signIn}.${note ? ` ${note}` : ''}`;
}

/** Writes the line on stderr when it is a terminal. */
export function announce(line: string, stream: NodeJS.WriteStream = process.stderr): void {
  if (stream.isTTY) stream.write(`${line}\n`);
}
