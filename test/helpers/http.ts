// A tiny HTTP client for tests: JSON in and out, a cookie jar, and the admin sign-in dance.

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A raw body sent as is (for malformed JSON tests). */
  raw?: string;
  /** Bearer token for Authorization. */
  token?: string;
}

/** A reply body as the tests read it: parsed JSON, null when empty, else the text itself. */
export function parseBody(text: string): any {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

export class Client {
  readonly baseUrl: string;
  private cookies = new Map<string, string>();

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  clearCookies(): void {
    this.cookies.clear();
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    // FormData goes out as multipart/form-data (fetch sets the boundary); anything else as JSON.
    let payload: string | FormData | undefined = options.raw;
    if (payload === undefined && body instanceof FormData) payload = body;
    else if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
    if (typeof payload === 'string') headers['content-type'] ??= 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some(
        (a) => /max-age=0\b/i.test(a.trim()) || /expires=thu, 01 jan 1970/i.test(a.trim()),
      );
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    return { status: res.status, body: parseBody(text) as T, headers: res.headers, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, body, options);
  }
  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, body, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, options);
  }

  /** POSTs one file as multipart/form-data (FormData + Blob) under the form field `field`. */
  upload<T = any>(
    path: string,
    field: string,
    filename: string,
    content: string | Uint8Array,
    options?: RequestOptions,
  ) {
    const form = new FormData();
    form.append(field, new Blob([content]), filename);
    return this.request<T>('POST', path, form, options);
  }

  async login(username: string, password: string): Promise<Reply> {
    return this.post('/api/session/login', { username, password });
  }
}

export const INITIAL_PASSWORD = 'admin';
export const ADMIN_PASSWORD = 'correct horse battery';

/**
 * Signs in as `admin` on a fresh server and completes the forced password change, so the
 * client holds a working admin session. On a server where this already happened, it signs
 * in with ADMIN_PASSWORD.
 */
export async function adminClient(baseUrl: string): Promise<Client> {
  const client = new Client(baseUrl);
  const first = await client.login('admin', INITIAL_PASSWORD);
  if (first.status === 200) {
    const changed = await client.post('/api/session/change-password', {
      current_password: INITIAL_PASSWORD,
      new_password: ADMIN_PASSWORD,
      confirm_new_password: ADMIN_PASSWORD,
    });
    if (changed.status !== 200) throw new Error(`password change failed: ${changed.text}`);
    return client;
  }
  const again = await client.login('admin', ADMIN_PASSWORD);
  if (again.status !== 200) throw new Error(`admin sign-in failed: ${again.text}`);
  return client;
}

/** Creates an automation token with the given scopes through an admin session. */
export async function mintAutomationToken(
  admin: Client,
  scopes: string[],
  ttl_days?: number,
): Promise<string> {
  const reply = await admin.post('/api/automation-tokens', {
    name: `test ${scopes.join('+')}`,
    scopes,
    ttl_days,
  });
  if (reply.status !== 201) throw new Error(`token create failed: ${reply.status} ${reply.text}`);
  return reply.body.token;
}

/**
 * Creates a non-admin account through an admin session, signs it in on `admin`'s server with
 * `initialPassword` and completes the forced password change to `password`; returns its client.
 */
export async function userClient(
  admin: Client,
  username: string,
  initialPassword: string,
  password = ADMIN_PASSWORD,
): Promise<Client> {
  const created = await admin.post('/api/users', { username, password: initialPassword, is_admin: false });
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${created.text}`);
  const user = new Client(admin.baseUrl);
  const login = await user.login(username, initialPassword);
  if (login.status !== 200) throw new Error(`user sign-in failed: ${login.status} ${login.text}`);
  const changed = await user.post('/api/session/change-password', {
    current_password: initialPassword,
    new_password: password,
    confirm_new_password: password,
  });
  if (changed.status !== 200) throw new Error(`password change failed: ${changed.status} ${changed.text}`);
  return user;
}
