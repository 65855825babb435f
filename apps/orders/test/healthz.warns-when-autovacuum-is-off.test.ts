// /healthz says when PostgreSQL runs with autovacuum off, as a warning beside status ok (the API
// works; its tables grow dead rows and stale statistics): whatever the server's setting, the
// answer matches it. This machine's server runs with it off (docs/production.md, "Outbox and inbox retention, and vacuum").

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { autovacuumWarning } from '@outbox/runtime/database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_healthz_autovacuum');
});
afterAll(async () => {
  await api?.close();
});

describe('GET /healthz and autovacuum', () => {
  it('warns, with status ok, exactly when the server runs with autovacuum off', async () => {
    const [row] = await queryOnce<{ autovacuum: string }>(api.db.url, 'show autovacuum');
    const res = await fetch(`${api.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; warnings?: string[] };
    expect(body.status).toBe('ok');
    if (row?.autovacuum === 'off') expect(body.warnings).toEqual([expect.stringMatching(/autovacuum off/)]);
    else expect(body.warnings).toBeUndefined();
  });

  it('words the warning for off only', () => {
    expect(autovacuumWarning('off')).toMatch(/^PostgreSQL runs with autovacuum off: .*turn it on/);
    expect(autovacuumWarning('on')).toBeUndefined();
    expect(autovacuumWarning(undefined)).toBeUndefined();
  });
});
