// The one consumer loop (startEventConsumer → runConsumer) applies events in chunks, one
// transaction per chunk, with a real PostgreSQL and the shared Kafka broker. Within a chunk:
// - an event the database refuses for its data (here 22003, a quantity that overflows a smallint
//   column the contract cannot know about) is dead-lettered alone, with its reason, and every
//   other event of the chunk is applied once;
// - a transient failure (40001) in the middle of the chunk rolls the whole chunk back and retries
//   it: nothing applied twice, nothing skipped;
// - a partition that keeps failing makes /healthz degraded with the reason, and its
//   consumer_partition_stuck_seconds grows while nothing new arrives; fixed, it recovers;
// - the `prepare` step of a handler runs before the transaction.
import { randomBytes } from 'node:crypto';
import { type EventEnvelope, ORDER_CREATED, type OrderCreatedV1 } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { type EventConsumer, startEventConsumer } from '@outbox/inbox';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type { Kafka } from 'kafkajs';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderTopics, header, orderCreated, produce, readMessages, testKafka } from './support.ts';

useLeakGuard();

let database: TestDatabase;
let pool: pg.Pool;
let kafka: Kafka;
beforeAll(async () => {
  database = await createOutboxDatabase('chunks');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  await pool.query(`create table effects (
    event_id uuid primary key,
    customer text not null,
    quantity smallint not null,
    prepared boolean not null,
    applied_at timestamptz not null default clock_timestamp())`);
  kafka = testKafka(sharedKafkaBrokers());
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

type Tx = pg.PoolClient;
const transaction = async <T>(work: (tx: Tx) => Promise<T>): Promise<T> => {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
};

/** The test's consumer; `failFirst` customers throw 40001 that many times, `down` ones always. */
function startTestConsumer(prefix: string, faults: { failFirst: Map<string, number>; down: Set<string> }) {
  const prepared = new Set<string>();
  const registry = createMetricsRegistry('chunk-test');
  const consumer = startEventConsumer<Tx>({
    source: '/chunk-test',
    groupId: `${prefix}consumer`,
    kafka: { brokers: sharedKafkaBrokers(), topicPrefix: prefix, topicLayout: { partitions: 1 } },
    aggregateTypes: ['order'],
    transaction,
    handlers: {
      [ORDER_CREATED]: {
        prepare: async (event) => {
          prepared.add(event.id);
        },
        apply: async (tx: Tx, event: EventEnvelope<OrderCreatedV1>) => {
          const { data } = event;
          const left = faults.failFirst.get(data.customerId) ?? 0;
          if (left > 0 || faults.down.has(data.customerId)) {
            faults.failFirst.set(data.customerId, left - 1);
            await tx.query(
              `do $$ begin raise exception 'could not serialize' using errcode = '40001'; end $$`,
            );
          }
          await tx.query(
            'insert into effects (event_id, customer, quantity, prepared) values ($1, $2, $3, $4)',
            [event.id, data.customerId, data.items[0]?.quantity, prepared.has(event.id)],
          );
          return 'STORED';
        },
      },
    },
    logger: pino({ level: 'silent' }),
    registry,
    retry: { baseMs: 50, capMs: 500 },
  });
  return { consumer, registry };
}

const effectsOf = async (customers: string[]) =>
  (
    await pool.query<{ event_id: string; customer: string; prepared: boolean }>(
      'select event_id::text, customer, prepared from effects where customer = any($1) order by applied_at',
      [customers],
    )
  ).rows;

describe('consumers apply events in chunks', () => {
  let running: EventConsumer | undefined;
  afterAll(() => running?.stop());

  it('dead-letters a poison event alone and retries a transient failure, applying every other event once', {
    timeout: 120_000,
  }, async () => {
    const prefix = `chunks-${randomBytes(4).toString('hex')}.`;
    const topic = await createOrderTopics(kafka, prefix);
    // Nine events on one partition, produced before the consumer starts: one batch, one chunk.
    const events = Array.from({ length: 9 }, (_, i) =>
      orderCreated(`c-${i}`, i === 3 ? 40_000 /* > smallint */ : i + 1),
    );
    await produce(kafka, topic, events);
    const faults = { failFirst: new Map([['c-6', 2]]), down: new Set<string>() };
    const { consumer, registry } = startTestConsumer(prefix, faults);
    running = consumer;

    const good = events.filter((_, i) => i !== 3);
    const customers = events.map((e) => e.data.customerId);
    await eventually('the 8 good events are applied', async () =>
      (await effectsOf(customers)).length >= 8 ? true : undefined,
    );
    const effects = await effectsOf(customers);
    // Each good event once, in offset order, each prepared before its transaction.
    expect(effects.map((e) => e.event_id)).toEqual(good.map((e) => e.id));
    expect(effects.every((e) => e.prepared)).toBe(true);
    // The transient failure really happened (twice), and rolled the chunk back each time.
    expect(faults.failFirst.get('c-6')).toBe(0);
    expect(await registry.getSingleMetricAsString('consumer_chunk_retries_total')).toMatch(
      /consumer_chunk_retries_total(_total)?\{.*partition="0".*\} 2/,
    );

    // The poison event, alone, in the DLT with its reason (the server's SQLSTATE).
    const letters = await readMessages(kafka, `${topic}.dlt`);
    expect(letters).toHaveLength(1);
    expect(header(letters[0] ?? {}, 'ce_id')).toBe(events[3]?.id);
    expect(header(letters[0] ?? {}, 'dlt_reason')).toMatch(/^SQLSTATE 22003: .*smallint/);
    expect(header(letters[0] ?? {}, 'dlt_offset')).toBe('3');
    expect(consumer.health()).toMatchObject({ status: 'ok', applied: 8, duplicates: 0, deadLettered: 1 });
  });

  it('reports a partition stuck on a failing event as degraded, with its reason and a growing metric', {
    timeout: 120_000,
  }, async () => {
    await running?.stop();
    const prefix = `stuck-${randomBytes(4).toString('hex')}.`;
    const topic = await createOrderTopics(kafka, prefix);
    const events = [orderCreated('s-0', 1), orderCreated('s-down', 1), orderCreated('s-2', 1)];
    await produce(kafka, topic, events);
    const faults = { failFirst: new Map<string, number>(), down: new Set(['s-down']) };
    const { consumer, registry } = startTestConsumer(prefix, faults);
    running = consumer;

    const degraded = await eventually('the consumer is degraded', async () => {
      const health = consumer.health();
      return health.status === 'degraded' && health.stuckPartitions ? health : undefined;
    });
    expect(degraded.lastError).toMatch(/order\.events\[0\] at offset 1 failed \d+ times: SQLSTATE 40001/);
    // Nothing of the chunk was applied: it is retried as a whole, in order.
    expect(await effectsOf(['s-0', 's-down', 's-2'])).toEqual([]);
    // The stuck time grows with no new message on the topic.
    const stuckSeconds = async () => {
      const text = await registry.getSingleMetricAsString('consumer_partition_stuck_seconds');
      return Number(/consumer_partition_stuck_seconds\{[^}]*partition="0"[^}]*\} ([\d.]+)/.exec(text)?.[1]);
    };
    const first = await stuckSeconds();
    await eventually('the stuck time grows', async () =>
      (await stuckSeconds()) > first + 1 ? true : undefined,
    );

    // The cause goes away: the chunk applies, the partition is no longer stuck.
    faults.down.clear();
    await eventually('all three are applied', async () =>
      (await effectsOf(['s-0', 's-down', 's-2'])).length === 3 ? true : undefined,
    );
    await eventually('ok again', async () => (consumer.health().status === 'ok' ? true : undefined));
    expect(await stuckSeconds()).toBeNaN(); // no series left
  });
});
