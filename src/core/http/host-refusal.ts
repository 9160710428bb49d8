import type { Context } from 'hono';
import { AppError } from '../errors.ts';
import type { AppEnv } from './app-env.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** Why a Host was refused: not in the `ALLOWED_HOSTS` list, or (no list) not a name of this machine. */
export type RefusalReason = 'not_listed' | 'unknown_name';

/** The sentence that explains the refusal and how to allow the name. */
function refusalDetail(header: string, name: string | null, reason: RefusalReason): string {
  const shown = header === '' ? 'no Host header' : `Host ${JSON.stringify(header.slice(0, 100))}`;
  if (name === null) {
    return `this server does not answer requests for ${shown}: send the server's address or name as the Host`;
  }
  if (reason === 'not_listed') {
    return `this server does not answer requests for ${shown}: it is not in ALLOWED_HOSTS; use the server's configured address, or add this name to ALLOWED_HOSTS (ALLOWED_HOSTS=…,${name})`;
  }
  return (
    `this server does not answer requests for ${shown}: without ALLOWED_HOSTS it answers only its IP addresses, ` +
    `localhost and this machine's own host name, so that a web page elsewhere cannot reach it by pointing its ` +
    `own name at this address (DNS rebinding). If ${name} is a name of this server, set ALLOWED_HOSTS=${name} ` +
    `and restart; list every name and address clients use (e.g. ALLOWED_HOSTS=${name},192.168.1.10): once set, ` +
    'only the listed ones are answered'
  );
}

function refusalPage(detail: string, name: string | null): string {
  const title = name === null ? 'Host name missing' : `This server does not answer to ${name}`;
  const fix =
    name === null ? '' : `<p>To allow the name, set:</p>\n<pre>ALLOWED_HOSTS=${escapeHtml(name)}</pre>\n`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · backupd</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem}pre{background:#f2f2f2;padding:.5rem}</style>
</head>
<body data-code="host_not_allowed">
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(detail)}.</p>
${fix}<p>Code: <code>host_not_allowed</code></p>
</body>
</html>
`;
}

/**
 * Refuses a request for a Host this server does not answer: 403 `host_not_allowed`, an HTML
 * page for a browser (it asked for `text/html`), else the JSON error `{detail, code}` (thrown,
 * for the one error handler). Both say how to allow the name.
 */
export function refuseHost(
  c: Context<AppEnv>,
  header: string,
  name: string | null,
  reason: RefusalReason,
): Response {
  const detail = refusalDetail(header, name, reason);
  if (!(c.req.header('accept') ?? '').includes('text/html')) {
    throw new AppError(403, detail, { code: 'host_not_allowed' });
  }
  c.get('log')?.info({ status: 403, code: 'host_not_allowed' }, detail);
  return c.html(refusalPage(detail, name), 403, {
    'Cache-Control': 'no-store',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    'X-Content-Type-Options': 'nosniff',
  });
}
