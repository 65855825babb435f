// writeEvent against a real PostgreSQL database with the shared migrations: the event is part of
// the caller's transaction (committed with it or not at all), validated before it is written,
// and its commit wakes relays through NOTIFY on the `outbox` channel.

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NewEvent } from '@outbox/contracts';
import { ORDER_CREATED, type OrderCreatedV1 } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { sharedMigrations } from '@outbox/inbox';
import { UnknownEventTypeError, writeEvent } from '@outbox/outbox';
import { migrateDatabase } from '@outbox/runtime/migrate';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

useLeakGuard();

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('events_write');
  await migrateDatabase(db.url, [sharedMigrations]);
});
afterAll(async () => {
  await db?.drop();
});

/** The writing transaction's connection, fresh for each test. */
let client: pg.Client;
beforeEach(async () => {
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterEach(async () => {
  await client.end();
});

function orderCreated(overrides: Partial<OrderCreatedV1> = {}): NewEvent<OrderCreatedV1> {
  const orderId = randomUUID();
  return {
    type: ORDER_CREATED,
    schemaVersion: 1,
    aggregateType: 'order',
    aggregateId: orderId,
    data: {
      orderId,
      customerId: 'customer-1',
      currency: 'EUR',
      totalCents: '17800',
      items: [{ sku: 'KB-101', quantity: 2, unitPriceCents: '8900' }],
      ...overrides,
    },
  };
}

type OutboxRow = {
  id: string;
  source: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  schema_version: number;
  payload: unknown;
  headers: unknown;
  status: string;
  attempts: number;
};

const rowsFor = (aggregateId: string) =>
  queryOnce<OutboxRow>(
    db.url,
    `select id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers,
            status, attempts
       from outbox where aggregate_id = $1`,
    [aggregateId],
  );

const outboxCount = async () =>
  (await queryOnce<{ n: number }>(db.url, 'select count(*)::int as n from outbox'))[0]?.n;

describe('writeEvent inside the caller’s transaction', () => {
  it('leaves no row when the transaction rolls back', async () => {
    const event = orderCreated();
    await client.query('begin');
    await writeEvent(client, '/orders', event);
    // Visible inside the transaction, so it really was written...
    const inside = await client.query('select 1 from outbox where aggregate_id = $1', [event.aggregateId]);
    expect(inside.rowCount).toBe(1);
    await client.query('rollback');
    // ...and gone with the rollback.
    expect(await rowsFor(event.aggregateId)).toEqual([]);
  });

  it('is not visible to others before COMMIT and leaves one pending row after it', async () => {
    const event = orderCreated();
    await client.query('begin');
    const id = await writeEvent(client, '/orders', event);
    expect(await rowsFor(event.aggregateId)).toEqual([]);
    await client.query('commit');

    expect(await rowsFor(event.aggregateId)).toEqual([
      {
        id,
        source: '/orders',
        aggregate_type: 'order',
        aggregate_id: event.aggregateId,
        event_type: ORDER_CREATED,
        schema_version: 1,
        payload: event.data,
        headers: {},
        status: 'pending',
        attempts: 0,
      },
    ]);
  });

  it('uses the id the caller gives, so a retried write cannot create a second event', async () => {
    const id = randomUUID();
    const event = { ...orderCreated(), id };
    await client.query('begin');
    expect(await writeEvent(client, '/orders', event)).toBe(id);
    await client.query('commit');

    await client.query('begin');
    await expect(writeEvent(client, '/orders', event)).rejects.toMatchObject({ code: '23505' });
    await client.query('rollback');
    expect((await rowsFor(event.aggregateId)).map((row) => row.id)).toEqual([id]);
  });

  it.each([
    ['a negative total', { totalCents: '-1' }],
    ['a total as a number', { totalCents: 17800 as unknown as string }],
    ['an order id that is not a UUID', { orderId: 'order-1' }],
    ['no items', { items: [] }],
    ['a lowercase currency', { currency: 'eur' }],
  ])('refuses ORDER_CREATED v1 data with %s (zod) and writes nothing', async (_name, overrides) => {
    const before = await outboxCount();
    const event = orderCreated(overrides as Partial<OrderCreatedV1>);
    await client.query('begin');
    await expect(writeEvent(client, '/orders', event)).rejects.toBeInstanceOf(z.ZodError);
    await client.query('commit');
    expect(await rowsFor(event.aggregateId)).toEqual([]);
    expect(await outboxCount()).toBe(before);
  });

  it('refuses data with a field the schema does not know', async () => {
    const event = orderCreated();
    const data = { ...event.data, discount: '100' };
    await client.query('begin');
    await expect(writeEvent(client, '/orders', { ...event, data })).rejects.toBeInstanceOf(z.ZodError);
    await client.query('commit');
    expect(await rowsFor(event.aggregateId)).toEqual([]);
  });

  it.each([
    ['an unknown type', { type: 'ORDER_TELEPORTED', schemaVersion: 1 }],
    ['an unknown version of a known type', { type: ORDER_CREATED, schemaVersion: 2 }],
  ])('throws UnknownEventTypeError for %s and writes nothing', async (_name, typeAndVersion) => {
    const before = await outboxCount();
    const event = { ...orderCreated(), ...typeAndVersion };
    await client.query('begin');
    const error = await writeEvent(client, '/orders', event).catch((err: unknown) => err);
    await client.query('commit');
    expect(error).toBeInstanceOf(UnknownEventTypeError);
    expect((error as UnknownEventTypeError).code).toBe('UNKNOWN_EVENT_TYPE');
    expect((error as Error).message).toContain(`${typeAndVersion.type} v${typeAndVersion.schemaVersion}`);
    expect(await outboxCount()).toBe(before);
  });
});

describe('the outbox trigger', () => {
  let listener: pg.Client;
  let received: pg.Notification[];

  beforeEach(async () => {
    received = [];
    listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (notification) => received.push(notification));
    await listener.query('listen outbox');
  });
  afterEach(async () => {
    await listener.end();
  });

  /** Wait until a notification matching `predicate` has arrived; fail after `timeoutMs`. */
  async function waitFor(predicate: (n: pg.Notification) => boolean, timeoutMs = 5_000) {
    const deadline = Date.now() + timeoutMs;
    while (!received.some(predicate)) {
      if (Date.now() > deadline) throw new Error(`no matching notification within ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  /**
   * Notifications are delivered in commit order, so once a marker committed by another session
   * has arrived, any notification committed before it would have arrived too.
   */
  async function sendMarker(): Promise<string> {
    const marker = `marker-${randomUUID()}`;
    await queryOnce(db.url, `select pg_notify('outbox', $1)`, [marker]);
    await waitFor((n) => n.payload === marker);
    return marker;
  }

  const wakeups = () => received.filter((n) => n.channel === 'outbox' && n.payload === '');

  it('notifies channel outbox when the insert commits, not before', async () => {
    await client.query('begin');
    await writeEvent(client, '/orders', orderCreated());
    await writeEvent(client, '/orders', orderCreated());
    await sendMarker();
    expect(wakeups()).toEqual([]);

    await client.query('commit');
    await waitFor((n) => n.channel === 'outbox' && n.payload === '');
    await sendMarker();
    // Two inserts in one transaction fold into a single wake-up.
    expect(wakeups()).toHaveLength(1);
  });

  it('does not notify for a transaction that rolls back', async () => {
    await client.query('begin');
    await writeEvent(client, '/orders', orderCreated());
    await client.query('rollback');
    const marker = await sendMarker();
    expect(received.map((n) => n.payload)).toEqual([marker]);
  });
});
