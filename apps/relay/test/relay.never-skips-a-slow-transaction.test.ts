import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-slowtx');
let db: TestDatabase;
let slow: pg.Client;
let relay: ServiceProcess;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_slowtx');
  slow = new pg.Client({ connectionString: db.url });
  await slow.connect();
  relay = await startRelay('relay-slowtx', {
    DATABASE_URL: db.url,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    RELAY_ID: 'relay-slowtx',
    RELAY_POLL_INTERVAL_MS: '500',
  });
});

afterAll(async () => {
  await slow?.query('rollback').catch(() => {});
  await slow?.end();
  await relay?.stop();
  await db?.drop();
});

const publishedIds = async (aggregatePrefix: string) =>
  (await outboxRows(db.url)).filter(
    (row) => row.aggregate_id.startsWith(aggregatePrefix) && row.status === 'published',
  );

describe('a transaction that commits after later ones', () => {
  it('has its event published too, though a higher seq was published first', {
    timeout: 60_000,
  }, async () => {
    // The slow transaction takes its seq first...
    await slow.query('begin');
    const { rows } = await slow.query<{ id: string; seq: string }>(
      `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
       values (gen_random_uuid(), '/orders', 'order', 'slow-0', 'ORDER_CREATED', 1, jsonb_build_object(
         'orderId', gen_random_uuid()::text, 'customerId', 'slow', 'currency', 'EUR', 'totalCents', '1',
         'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1, 'unitPriceCents', '1'))))
       returning id, seq`,
    );
    const slowRow = rows[0];
    if (!slowRow) throw new Error('insert returned no row');

    // ...later transactions commit first, and are published.
    for (let i = 0; i < 3; i++)
      await insertEvents(db.url, { count: 5, aggregates: 5, aggregateIdPrefix: `fast${i}-` });
    const fast = await eventually(
      'the later events published',
      async () => {
        const published = await publishedIds('fast');
        return published.length === 15 ? published : undefined;
      },
      20_000,
    );
    expect(fast.every((row) => row.seq > Number(slowRow.seq))).toBe(true);
    // Give the relay a few idle polls past those higher seqs before the slow one commits.
    await sleep(1500);

    await slow.query('commit');
    await eventually(
      'the slow transaction’s event published',
      async () => ((await publishedIds('slow')).length === 1 ? true : undefined),
      10_000,
    );
    const messages = await readTopic(brokers, `${prefix}order.events`, { timeoutMs: 30_000 });
    expect(messages.filter((message) => message.eventId === slowRow.id)).toHaveLength(1);
    expect(messages).toHaveLength(16);
  });
});
