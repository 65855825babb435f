// The console's outbox card says how each outbox is published (docs/design.md#polling-or-cdc): by
// its relay (polling), or by a Debezium connector, with the connector's state and the WAL its
// replication slot holds (debezium). It reads that from each relay's /healthz; the bodies here are
// what apps/relay answers in each mode (apps/relay/test/relay.reports-its-debezium-connector-on-healthz.test.ts
// and tests/cdc/cdc.retention-deletes-only-rows-the-slot-confirmed.test.ts check the relay's side).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxView } from '../src/readModels/outboxes.ts';

useLeakGuard();

let healthBody: unknown;
let relay: Server;
let relayUrl: string;
let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  relay = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(healthBody));
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  db = await createOutboxDatabase('console_relay_mode');
  pool = new pg.Pool({ connectionString: db.url, max: 1 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
  await new Promise((resolve) => relay?.close(resolve));
});

const view = () => outboxView({ name: 'orders', pool, url: 'http://127.0.0.1:1', relayUrl });

describe('the outbox read model', () => {
  it('says a polling relay publishes the outbox', async () => {
    healthBody = { status: 'ok', relayId: 'relay-orders', mode: 'polling', published: 3 };
    const { relay } = await view();
    expect(relay).toEqual({ status: 'ok', mode: 'polling' });
  });

  it('shows a debezium connector and the WAL its slot holds', async () => {
    healthBody = {
      relayId: 'relay-orders',
      status: 'ok',
      mode: 'debezium',
      connector: 'outbox-orders',
      connectorRunning: true,
      connectorState: 'RUNNING',
      taskStates: ['RUNNING'],
      slot: {
        name: 'outbox_orders',
        active: true,
        retainedWalBytes: 628280,
        unconfirmedWalBytes: 628224,
        confirmedFlushLsn: '0/95C2C8C0',
        walStatus: 'reserved',
      },
    };
    const { relay } = await view();
    expect(relay).toEqual({
      status: 'ok',
      mode: 'debezium',
      cdc: {
        connector: 'outbox-orders',
        connectorState: 'RUNNING',
        taskStates: ['RUNNING'],
        slot: { name: 'outbox_orders', active: true, retainedWalBytes: 628280, unconfirmedWalBytes: 628224 },
      },
    });
  });

  it('says why a debezium outbox is degraded: a failed task, a missing slot', async () => {
    healthBody = {
      status: 'degraded',
      mode: 'debezium',
      connector: 'outbox-orders',
      connectorRunning: false,
      connectorState: 'RUNNING',
      taskStates: ['FAILED'],
      lastError: 'org.apache.kafka.connect.errors.ConnectException: boom',
      slotError: 'replication slot outbox_orders does not exist: the connector creates it when it starts',
    };
    const { relay } = await view();
    expect(relay).toMatchObject({
      status: 'degraded',
      mode: 'debezium',
      detail: 'org.apache.kafka.connect.errors.ConnectException: boom',
      cdc: {
        taskStates: ['FAILED'],
        slotError: 'replication slot outbox_orders does not exist: the connector creates it when it starts',
      },
    });
    expect(relay.cdc).not.toHaveProperty('slot');
  });
});
