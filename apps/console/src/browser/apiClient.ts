import type { Problem } from '../shared/apiTypes.ts';

const TOKEN_KEY = 'console-admin-token';

/**
 * The admin token comes in the URL the demo prints (`#token=…`), or is typed in once. It is kept
 * for this tab only (sessionStorage), removed from the address bar, and sent as a bearer header
 * with every admin action and every read.
 */
export function takeTokenFromUrl(): void {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname + location.search);
  }
}

export function adminToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setAdminToken(token: string): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

let askedForToken = false;

/**
 * GET JSON with the token kept for this tab, if any: a console started with CONSOLE_READ_TOKEN
 * answers reads only to it or to the admin token. Refused (401), it asks for one (once a page) and retries.
 */
export async function getJson<T>(path: string): Promise<T> {
  let res = await fetch(path, { headers: withToken() });
  if (res.status === 401 && !askedForToken) {
    askedForToken = true;
    const token = prompt('This console needs its read token (CONSOLE_READ_TOKEN) or its admin token:');
    if (token) setAdminToken(token.trim());
    res = await fetch(path, { headers: withToken() });
  }
  if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
  return (await res.json()) as T;
}

function withToken(): Record<string, string> {
  const token = adminToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

export type Answer<T> =
  | { ok: true; status: number; body: T; headers: Headers }
  | { ok: false; status: number; problem: Problem };

/**
 * POST JSON, with the admin token for an admin action and any `headers` given; a refusal comes
 * back as the problem+json the server sent, not as an exception.
 */
export async function postJson<T>(
  path: string,
  body: unknown,
  options: { admin?: boolean; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const token = adminToken();
  if (options.admin && token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = {
      type: 'about:blank',
      title: `${res.status} ${res.statusText}`,
      status: res.status,
      detail: text,
    };
  }
  if (res.ok) return { ok: true, status: res.status, body: parsed as T, headers: res.headers };
  return { ok: false, status: res.status, problem: parsed as Problem };
}
