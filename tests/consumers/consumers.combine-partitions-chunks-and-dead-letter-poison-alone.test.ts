// With a chunk linger (chunkLingerMs, the orders reply consumer's KAFKA_CHUNK_LINGER_MS), the
// chunks of several partitions that arrive together are applied in ONE transaction
// (combinedChunks.ts). The invariants of one chunk per transaction still hold:
// - chunks of two partitions that arrive together commit together, and each event is applied once;
// - a poison event in one partition does not hold the other back: the combined transaction rolls
//   back, each partition's chunk is applied on its own, and the poison event is dead-lettered from
//   its own partition, alone, while every other event of both partitions is applied once, each
//   partition in offset order.
// A real PostgreSQL and the shared Kafka broker, each Kafka client.
import { randomBytes } from 'node:crypto';
import { type EventEnvelope, ORDER_CREATED, type OrderCreatedV1, toKafkaMessage } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { type EventConsumer, startEventConsumer } from '@outbox/inbox';
import { transactionOn } from '@outbox/runtime/database';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type { Kafka } from 'kafkajs';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { header, orderCreated, readMessages, testKafka } from './support.ts';

useLeakGuard();

const PARTITIONS = 2;
/**
 * Generous, so that the two partitions' chunks meet even on a starved machine, where a client may
 * hand over two partitions of one fetch a few hundred milliseconds apart.
 */
const LINGER_MS = 1_000;

let database: TestDatabase;
let pool: pg.Pool;
let kafka: Kafka;
beforeAll(async () => {
  database = await createOutboxDatabase('combined_chunks');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  await pool.query(`create table effects (
    event_id uuid primary key,
    customer text not null,
    quantity smallint not null,
    transaction_id bigint not null default txid_current(),
    applied_at timestamptz not null default clock_timestamp())`);
  kafka = testKafka(sharedKafkaBrokers());
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

/** `<prefix>order.events` (two partitions) and its dead-letter topic; the events on the partitions given. */
async function produceOn(prefix: string, placed: { event: EventEnvelope; partition: number }[]) {
  const topic = `${prefix}order.events`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [topic, `${topic}.dlt`].map((name) => ({ topic: name, numPartitions: PARTITIONS })),
  });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: placed.map(({ event, partition }) => ({ ...toKafkaMessage(event), partition })),
  });
  await producer.disconnect();
  return topic;
}

function startCombiningConsumer(prefix: string, client: KafkaClientName): EventConsumer {
  return startEventConsumer<pg.PoolClient>({
    source: '/combined-test',
    groupId: `${prefix}consumer`,
    kafka: {
      brokers: sharedKafkaBrokers(),
      topicPrefix: prefix,
      topicLayout: { partitions: PARTITIONS },
      client,
    },
    aggregateTypes: ['order'],
    transaction: transactionOn(pool),
    handlers: {
      [ORDER_CREATED]: async (tx, event: EventEnvelope<OrderCreatedV1>) => {
        // A quantity over a smallint's range is refused by the database (22003) on every delivery.
        await tx.query('insert into effects (event_id, customer, quantity) values ($1, $2, $3)', [
          event.id,
          event.data.customerId,
          event.data.items[0]?.quantity,
        ]);
        return 'STORED';
      },
    },
    logger: pino({ level: 'silent' }),
    registry: createMetricsRegistry(`${prefix}consumer`),
    retry: { baseMs: 50, capMs: 500 },
    chunkLingerMs: LINGER_MS,
    chunkGatherMs: LINGER_MS,
  });
}

const effectsOf = async (customers: string[]) =>
  (
    await pool.query<{ event_id: string; customer: string; transaction_id: string }>(
      `select event_id::text, customer, transaction_id::text from effects
        where customer = any($1) order by applied_at`,
      [customers],
    )
  ).rows;

describe.each<KafkaClientName>(['kafkajs', 'platformatic'])(
  'a consumer combining partitions (%s)',
  (client) => {
    let running: EventConsumer | undefined;
    afterAll(() => running?.stop());

    it('applies chunks of two partitions that arrive together in one transaction', {
      timeout: 120_000,
    }, async () => {
      const prefix = `combined-${randomBytes(4).toString('hex')}.`;
      const placed = Array.from({ length: 6 }, (_, i) => ({
        event: orderCreated(`${prefix}t-${i}`),
        partition: i % PARTITIONS,
      }));
      await produceOn(prefix, placed);
      running = startCombiningConsumer(prefix, client);
      const customers = placed.map(({ event }) => (event as EventEnvelope<OrderCreatedV1>).data.customerId);
      await eventually('the 6 events are applied', async () =>
        (await effectsOf(customers)).length === 6 ? true : undefined,
      );
      // A transaction that holds events of both partitions: without the linger each holds one
      // partition's. (Not every event in one: @platformatic/kafka's lanes may hand a partition's
      // first message over before the rest of its fetch, so a partition can come in two chunks.)
      const effects = await effectsOf(customers);
      const partitionOf = new Map(placed.map(({ event, partition }) => [event.id, partition]));
      const partitionsByTransaction = new Map<string, Set<number>>();
      for (const { event_id, transaction_id } of effects) {
        const seen = partitionsByTransaction.get(transaction_id) ?? new Set<number>();
        seen.add(partitionOf.get(event_id) as number);
        partitionsByTransaction.set(transaction_id, seen);
      }
      expect([...partitionsByTransaction.values()].some((seen) => seen.size === PARTITIONS)).toBe(true);
      expect(running.health()).toMatchObject({ status: 'ok', applied: 6, deadLettered: 0 });
      await running.stop();
      running = undefined;
    });

    it('dead-letters a poison event from its own partition and applies every other event of both once', {
      timeout: 120_000,
    }, async () => {
      const prefix = `combined-poison-${randomBytes(4).toString('hex')}.`;
      // Partition 0: p-0 … p-3, p-1 poison; partition 1: q-0 … q-3.
      const placed = [
        ...Array.from({ length: 4 }, (_, i) => ({
          event: orderCreated(`${prefix}p-${i}`, i === 1 ? 40_000 /* > smallint */ : 1),
          partition: 0,
        })),
        ...Array.from({ length: 4 }, (_, i) => ({ event: orderCreated(`${prefix}q-${i}`), partition: 1 })),
      ];
      const topic = await produceOn(prefix, placed);
      running = startCombiningConsumer(prefix, client);
      const poison = placed[1]?.event as EventEnvelope;
      const good = placed.filter(({ event }) => event !== poison);
      const customers = placed.map(({ event }) => (event as EventEnvelope<OrderCreatedV1>).data.customerId);
      await eventually('the 7 good events are applied', async () =>
        (await effectsOf(customers)).length >= 7 ? true : undefined,
      );

      const effects = await effectsOf(customers);
      const idsOn = (partition: number, rows: { event_id: string }[]) =>
        rows.filter((row) => good.some((g) => g.partition === partition && g.event.id === row.event_id));
      // Each good event once, each partition in offset order.
      for (const partition of [0, 1])
        expect(idsOn(partition, effects).map((row) => row.event_id)).toEqual(
          good.filter((g) => g.partition === partition).map((g) => g.event.id),
        );
      expect(effects).toHaveLength(7);

      const letters = await readMessages(kafka, `${topic}.dlt`);
      expect(letters).toHaveLength(1);
      expect(header(letters[0] ?? {}, 'ce_id')).toBe(poison.id);
      expect(header(letters[0] ?? {}, 'dlt_partition')).toBe('0');
      expect(header(letters[0] ?? {}, 'dlt_offset')).toBe('1');
      expect(header(letters[0] ?? {}, 'dlt_reason')).toMatch(/^SQLSTATE 22003: .*smallint/);
      expect(running.health()).toMatchObject({ status: 'ok', applied: 7, duplicates: 0, deadLettered: 1 });
    });
  },
);
