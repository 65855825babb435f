// The console's outbox cards in a real Chromium: each says how its outbox is published, and a
// debezium one shows its connector's state and the WAL its replication slot holds
// (docs/design.md#polling-or-cdc). The relays are stand-ins answering /healthz with the bodies
// apps/relay answers in each mode; the outboxes are a real database.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { loadConfig } from '@outbox/runtime/config';
import { createLogger } from '@outbox/runtime/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';
import { type RunningConsole, startConsole } from '../src/console.ts';
import { type ConsolePage, openConsole, screenshot } from './browser.ts';

useLeakGuard();

const bodies: Record<string, unknown> = {
  '/orders/healthz': {
    status: 'degraded',
    mode: 'debezium',
    connector: 'outbox-orders',
    connectorRunning: false,
    connectorState: 'PAUSED',
    taskStates: ['PAUSED'],
    slot: {
      name: 'outbox_orders',
      active: true,
      retainedWalBytes: 6640680,
      unconfirmedWalBytes: 2003272,
      confirmedFlushLsn: '0/A63450D0',
      walStatus: 'reserved',
    },
  },
  '/inventory/healthz': { status: 'ok', mode: 'polling', published: 0 },
  '/billing/healthz': { status: 'ok', mode: 'polling', published: 0 },
};

let relays: Server;
let db: TestDatabase;
let consoleApp: RunningConsole;
let browser: ConsolePage | undefined;

beforeAll(async () => {
  relays = createServer((req, res) => {
    const body = bodies[req.url ?? ''];
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => relays.listen(0, '127.0.0.1', resolve));
  const relaysUrl = `http://127.0.0.1:${(relays.address() as AddressInfo).port}`;
  db = await createOutboxDatabase('console_cdc_card');
  const nobody = `http://127.0.0.1:${await freePort()}`;
  const config = loadConfig('console', configSchema, {
    PORT: '0',
    ORDERS_URL: nobody,
    INVENTORY_URL: nobody,
    BILLING_URL: nobody,
    RELAY_ORDERS_URL: `${relaysUrl}/orders`,
    RELAY_INVENTORY_URL: `${relaysUrl}/inventory`,
    RELAY_BILLING_URL: `${relaysUrl}/billing`,
    ORDERS_DATABASE_URL: db.url,
    INVENTORY_DATABASE_URL: db.url,
    BILLING_DATABASE_URL: db.url,
    KAFKA_BROKERS: sharedKafkaBrokers().join(','),
    KAFKA_TOPIC_PREFIX: 'console-cdc-card.',
  });
  consoleApp = await startConsole({ config, logger: createLogger('console', 'silent') });
});

afterAll(async () => {
  await browser?.browser.close();
  await consoleApp?.close();
  await db?.drop();
  await new Promise((resolve) => relays?.close(resolve));
});

describe('the outbox cards', () => {
  it('show polling relays, and a debezium connector with the WAL its slot holds', async () => {
    browser = await openConsole(consoleApp.url);
    const { page } = browser;
    const orders = page.locator('[data-service="orders"] [data-field="mode"]');
    await orders.waitFor({ timeout: 30_000 });
    expect(await orders.getAttribute('data-mode')).toBe('debezium');
    expect(await orders.locator('[data-field="connector-state"]').textContent()).toBe('PAUSED');
    const slot = orders.locator('[data-field="slot"]');
    expect(await slot.getAttribute('data-retained-bytes')).toBe('6640680');
    expect(await slot.textContent()).toBe(
      '; slot outbox_orders read, holds 6.3 MiB of WAL (1.9 MiB not yet confirmed)',
    );
    expect(await page.locator('[data-service="orders"] [data-field="relay"]').textContent()).toBe(
      'relay-orders: degraded: its connector or its slot is not running (below)',
    );
    for (const service of ['inventory', 'billing']) {
      expect(
        await page.locator(`[data-service="${service}"] [data-field="mode"]`).getAttribute('data-mode'),
      ).toBe('polling');
    }
    await screenshot(page, 'console-outbox-card-cdc');
  });
});
