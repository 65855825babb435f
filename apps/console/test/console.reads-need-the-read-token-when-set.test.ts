// The console shows customers' orders and the system's insides. With CONSOLE_READ_TOKEN set, every
// /api read answers only to it or to the admin token (docs/production.md, "The console is an
// operator's tool"); the page itself, its runbooks and /healthz hold no data and stay open. Unset,
// reads need no token, as in the local demo on loopback.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createLogger } from '@outbox/runtime/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../src/console.ts';
import { bareConsoleConfig } from './bareConsole.ts';

useLeakGuard();

const READ_TOKEN = 'console-read-token-0123456789';
const ADMIN_TOKEN = 'console-admin-token-0123456789';

const READS = [
  '/api/info',
  '/api/orders',
  '/api/orders/00000000-0000-4000-8000-000000000000/timeline',
  '/api/outbox',
  '/api/consumers',
  '/api/kafka',
];

let guarded: RunningConsole;
let open: RunningConsole;

beforeAll(async () => {
  const start = async (extra: Record<string, string>) =>
    startConsole({
      config: await bareConsoleConfig('console-read-token-test.', {
        CONSOLE_ADMIN_TOKEN: ADMIN_TOKEN,
        RELAY_ADMIN_TOKEN: 'relay-token-0123456789',
        ...extra,
      }),
      logger: createLogger('console', 'silent'),
    });
  [guarded, open] = await Promise.all([start({ CONSOLE_READ_TOKEN: READ_TOKEN }), start({})]);
});

afterAll(async () => {
  await Promise.all([guarded?.close(), open?.close()]);
});

const get = (base: RunningConsole, path: string, token?: string) =>
  fetch(`${base.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe('console reads with CONSOLE_READ_TOKEN', () => {
  it.each(READS)('GET %s answers 401 without the token or with a wrong one', async (path) => {
    const bare = await get(guarded, path);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('content-type')).toMatch(/problem\+json/);
    expect(((await bare.json()) as { detail: string }).detail).toContain('CONSOLE_READ_TOKEN');
    expect((await get(guarded, path, 'not-the-token-0123456789')).status).toBe(401);
  });

  it.each(READS)('GET %s answers to the read token and to the admin token', async (path) => {
    // The services behind the bare console are away: a read may fail, but it is not refused.
    expect((await get(guarded, path, READ_TOKEN)).status).not.toBe(401);
    expect((await get(guarded, path, ADMIN_TOKEN)).status).not.toBe(401);
  });

  it('the read token is not the admin token: placing an order still needs the admin one', async () => {
    const res = await fetch(`${guarded.url}/api/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${READ_TOKEN}` },
      body: JSON.stringify({
        customerId: 'reader',
        currency: 'EUR',
        items: [{ sku: 'KB-101', quantity: 1 }],
      }),
    });
    expect(res.status).toBe(401);
  });

  it('the page, the runbooks and /healthz stay open (they hold no data)', async () => {
    expect((await get(guarded, '/')).status).toBe(200);
    expect((await get(guarded, '/healthz')).status).toBe(200);
    expect((await get(guarded, '/runbooks/OutboxEventDeadLettered')).status).not.toBe(401);
  });

  it('without CONSOLE_READ_TOKEN, reads need no token', async () => {
    expect((await get(open, '/api/info')).status).toBe(200);
  });
});
