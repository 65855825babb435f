import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstOccurrencesByKey, metricValue, startRelay, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const TOKEN = 'test-admin-token-0123456789';
const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-poison');
let db: TestDatabase;
let relay: ServiceProcess;

const validOrder = {
  orderId: '6f1c1a52-3f0e-4a55-9a52-1c3c0c7d9e01',
  customerId: 'customer-poison',
  currency: 'EUR',
  totalCents: '1999',
  items: [{ sku: 'MS-202', quantity: 1, unitPriceCents: '1999' }],
};

beforeAll(async () => {
  db = await createOutboxDatabase('relay_poison');
  // Normal events, then the poison (its aggregate's first event), a later event of the poison's
  // aggregate, and more normal events: all committed before the relay starts, so the poison is
  // claimed in a batch together with healthy events.
  await insertEvents(db.url, { count: 100, aggregates: 20 });
  await insertEvents(db.url, {
    count: 1,
    aggregates: 1,
    aggregateIdPrefix: 'poison-',
    // ~2 MB: above the broker's default max message size (~1 MB). The API would never write it.
    payload: { ...validOrder, note: 'x'.repeat(2 * 1024 * 1024) },
  });
  await insertEvents(db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'poison-' });
  await insertEvents(db.url, { count: 100, aggregates: 20 });
  relay = await startRelay('relay-poison', {
    DATABASE_URL: db.url,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    RELAY_ID: 'relay-poison',
    RELAY_ADMIN_TOKEN: TOKEN,
    RELAY_POLL_INTERVAL_MS: '500',
  });
});

afterAll(async () => {
  await relay?.stop();
  await db?.drop();
});

/** `token: null` sends no Authorization header at all. */
const redrive = (body: unknown, token: string | null = TOKEN) =>
  fetch(`${relay.url}/admin/redrive`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });

describe('a poison event (larger than the broker accepts)', () => {
  let poisonId: string;
  let laterId: string;

  it('is dead-lettered while every other aggregate is published', { timeout: 90_000 }, async () => {
    const [poison, later] = (await outboxRows(db.url)).filter((row) => row.aggregate_id === 'poison-0');
    if (!poison || !later) throw new Error('poison rows missing');
    poisonId = poison.id;
    laterId = later.id;

    const rows = await eventually(
      'poison failed and every other aggregate published',
      async () => {
        const rows = await outboxRows(db.url);
        const others = rows.filter((row) => row.aggregate_id !== 'poison-0');
        const poisonRow = rows.find((row) => row.id === poisonId);
        return poisonRow?.status === 'failed' && others.every((row) => row.status === 'published')
          ? rows
          : undefined;
      },
      60_000,
    );
    const poisonRow = rows.find((row) => row.id === poisonId);
    expect(poisonRow?.last_error).toMatch(/refused by the broker/);
    expect(poisonRow?.last_error).toMatch(/larger than the max message size/);
    expect(await metricValue(relay, 'outbox_dead_lettered_total')).toBe(1);

    // The later event of the poison's aggregate is held behind it: never even claimed.
    await sleep(1500);
    const laterRow = (await outboxRows(db.url)).find((row) => row.id === laterId);
    expect(laterRow).toMatchObject({ status: 'pending', attempts: 0 });

    // Every healthy event reached the topic, in seq order per aggregate; the poison's aggregate did not.
    const messages = await readTopic(brokers, `${prefix}order.events`, { timeoutMs: 30_000 });
    const { byKey, counts } = firstOccurrencesByKey(messages);
    const healthy = rows.filter((row) => row.aggregate_id !== 'poison-0');
    expect([...counts.keys()].sort()).toEqual(healthy.map((row) => row.id).sort());
    for (const aggregate of new Set(healthy.map((row) => row.aggregate_id))) {
      expect(byKey.get(aggregate), aggregate).toEqual(
        healthy.filter((row) => row.aggregate_id === aggregate).map((row) => row.id),
      );
    }
    expect(byKey.has('poison-0')).toBe(false);
  });

  it('redrive needs the admin token', async () => {
    expect((await redrive({ id: poisonId }, null)).status).toBe(401);
    expect((await redrive({ id: poisonId }, 'wrong-token-0123456789abc')).status).toBe(401);
    const [row] = await queryOnce<{ status: string }>(db.url, 'select status from outbox where id = $1', [
      poisonId,
    ]);
    expect(row?.status).toBe('failed');
  });

  it('redriven unchanged, it fails again', { timeout: 30_000 }, async () => {
    const res = await redrive({ id: poisonId });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ redriven: [poisonId] });
    await eventually(
      'poison dead-lettered a second time',
      async () => ((await metricValue(relay, 'outbox_dead_lettered_total')) === 2 ? true : undefined),
      20_000,
    );
    const [row] = await queryOnce<{ status: string }>(db.url, 'select status from outbox where id = $1', [
      poisonId,
    ]);
    expect(row?.status).toBe('failed');
    const [later] = await queryOnce<{ status: string }>(db.url, 'select status from outbox where id = $1', [
      laterId,
    ]);
    expect(later?.status).toBe('pending');
  });

  it('fixed and redriven, it is published, then the event held behind it', { timeout: 60_000 }, async () => {
    // What an operator does after fixing the cause: correct the row, then redrive it.
    await queryOnce(db.url, 'update outbox set payload = $2::jsonb where id = $1 and status = $3', [
      poisonId,
      JSON.stringify(validOrder),
      'failed',
    ]);
    const res = await redrive({ id: poisonId });
    expect(await res.json()).toEqual({ redriven: [poisonId] });
    await eventually(
      'poison and the later event published',
      async () => {
        const rows = await queryOnce<{ status: string }>(
          db.url,
          'select status from outbox where id = any($1::uuid[])',
          [[poisonId, laterId]],
        );
        return rows.length === 2 && rows.every((row) => row.status === 'published') ? true : undefined;
      },
      30_000,
    );
    const messages = await readTopic(brokers, `${prefix}order.events`, { timeoutMs: 30_000 });
    const { byKey } = firstOccurrencesByKey(messages);
    expect(byKey.get('poison-0')).toEqual([poisonId, laterId]);
  });
});
