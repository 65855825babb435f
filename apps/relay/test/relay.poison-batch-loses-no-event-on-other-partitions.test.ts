import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { createOutboxStore } from '@outbox/outbox';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { Partitioners } from 'kafkajs';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayMetrics } from '../src/engine/metrics.ts';
import { KafkaPublisher } from '../src/engine/publisher.ts';
import { Relay } from '../src/engine/relay.ts';
import { Wakeup } from '../src/engine/wakeup.ts';
import { topicPrefix } from './relayProcess.ts';

/**
 * A poison event makes the broker refuse ONE partition of a produce request; the other
 * partitions of the same request ARE written. kafkajs then rolls back the idempotent producer's
 * sequence numbers of every partition in the request (sendMessages.js), so the next send to a
 * partition that was written reuses sequence numbers the broker has already seen:
 *   - a send with a different number of messages gets OUT_OF_ORDER_SEQUENCE_NUMBER (the relay
 *     calls it transient and retries; the partition is stuck until a send happens to match), and
 *   - a send with the same number of messages is taken by the broker for a retry of the batch it
 *     already has: acknowledged, NOT written. The relay marks those events published: lost.
 * This file steps the relay by hand (real Postgres, real broker, real KafkaPublisher) through
 * one such sequence; the random retry backoff of a running relay produces it by chance.
 */

useLeakGuard();

const brokers = sharedKafkaBrokers();

/** Aggregate ids `k<i>-0` whose Kafka key lands on the given partition of a 2-partition topic. */
function keysOnPartition(partition: number, count: number): string[] {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = [0, 1].map((partitionId) => ({
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    partitionErrorCode: 0,
  }));
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    const key = `k${i}-0`;
    if (partitioner({ topic: '', partitionMetadata, message: { key, value: null } }) === partition)
      keys.push(key);
  }
  return keys;
}

// Each client the relay can use (KAFKA_CLIENT).
describe.each<KafkaClientName>(['kafkajs', 'platformatic'])(
  'a batch refused because of one poison event, through %s',
  (client) => {
    const prefix = topicPrefix(`relay-poisonseq-${client}`);
    const topic = `${prefix}order.events`;
    let db: TestDatabase;
    let pool: pg.Pool;
    let publisher: KafkaPublisher;
    let relay: Relay;

    const insertOne = (aggregateId: string, payload?: unknown) =>
      insertEvents(db.url, {
        count: 1,
        aggregates: 1,
        aggregateIdPrefix: aggregateId.slice(0, -1),
        ...(payload ? { payload } : {}),
      });

    beforeAll(async () => {
      db = await createOutboxDatabase(`relay_poisonseq_${client}`);
      pool = new pg.Pool({ connectionString: db.url, max: 2 });
      const logger = pino({ level: 'silent' });
      publisher = new KafkaPublisher({
        client,
        clientId: `poisonseq-${client}`,
        brokers,
        topicPrefix: prefix,
        topicLayout: { partitions: 2 },
        logger,
      });
      const store = createOutboxStore(pool);
      relay = new Relay({
        store,
        publisher,
        wakeup: new Wakeup(), // no NOTIFY listener: the test steps the relay by hand
        logger,
        metrics: createRelayMetrics(createMetricsRegistry('relay-test'), store),
        options: { id: 'poisonseq', batchSize: 10, leaseMs: 30_000, pollIntervalMs: 1000, maxAttempts: 10 },
      });
    });

    afterAll(async () => {
      await publisher?.disconnect();
      await pool?.end();
      await db?.drop();
    });

    it('loses no event of the partitions the broker did write', { timeout: 60_000 }, async () => {
      const [a, b, c] = keysOnPartition(0, 3) as [string, string, string];
      const [poison] = keysOnPartition(1, 1) as [string];

      // One batch: two healthy events on partition 0, the poison on partition 1.
      await insertOne(a);
      await insertOne(b);
      await insertOne(poison, { note: 'x'.repeat(2 * 1024 * 1024) });
      await relay.drainOnce();
      const afterPoison = await outboxRows(db.url);
      console.log(
        'after the poison batch:',
        afterPoison.map((row) => `${row.aggregate_id} ${row.status} ${row.last_error?.slice(0, 80) ?? ''}`),
      );
      expect(afterPoison.find((row) => row.aggregate_id === poison)?.status).toBe('failed');

      // A new event of another aggregate on partition 0, and the healthy events' retries come due
      // at different times (their backoff is random): here a's before b's.
      await insertOne(c);
      await queryOnce(
        db.url,
        `update outbox set next_attempt_at = now() + interval '1 hour' where aggregate_id = $1`,
        [b],
      );
      await queryOnce(db.url, `update outbox set next_attempt_at = now() where aggregate_id <> $1`, [b]);
      await relay.drainOnce();
      // Then everything else, without waiting for backoffs.
      for (let step = 0; step < 20; step++) {
        await queryOnce(db.url, `update outbox set next_attempt_at = now() where status = 'pending'`);
        const { claimed } = await relay.drainOnce();
        if (claimed === 0) break;
      }

      const rows = await outboxRows(db.url);
      console.log(
        'final:',
        rows.map((row) => `${row.aggregate_id} ${row.status} attempts=${row.attempts}`),
      );
      const onTopic = await readTopic(brokers, topic, { timeoutMs: 30_000 });
      console.log(
        'on the topic:',
        onTopic.map((m) => `p${m.partition}@${m.offset} ${m.key}`),
      );
      const idsOnTopic = new Set(onTopic.map((message) => message.eventId));
      const healthy = rows.filter((row) => row.aggregate_id !== poison);
      // Every healthy event is published...
      expect(healthy.map((row) => [row.aggregate_id, row.status])).toEqual(
        healthy.map((row) => [row.aggregate_id, 'published']),
      );
      // ...and every event marked published is really on the topic.
      expect(
        healthy.filter((row) => !idsOnTopic.has(row.id)).map((row) => row.aggregate_id),
        'marked published but not on the topic',
      ).toEqual([]);
    });
  },
);
