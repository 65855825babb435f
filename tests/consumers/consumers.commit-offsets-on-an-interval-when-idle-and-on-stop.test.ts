// A consumer commits its offsets every commitIntervalMs, not after every chunk: each commit is an
// OffsetCommit request the broker writes to __consumer_offsets, and at a low rate a chunk holds
// one event. What it must not lose: the offsets of applied chunks are committed within about an
// interval once the stream goes idle (consumer lag and its alert read committed offsets), and at
// once when the consumer stops, so the next member of the group starts after them. (A kill before
// the commit redelivers, and processed_events skips what was applied:
// consumers.survive-kill-9-between-commit-and-offset-commit.test.ts.)
import { randomBytes } from 'node:crypto';
import { ORDER_CREATED } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { type EventConsumer, startEventConsumer } from '@outbox/inbox';
import { transactionOn } from '@outbox/runtime/database';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type { Kafka } from 'kafkajs';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderTopics, orderCreated, produce, testKafka, useEffectsDatabase } from './support.ts';

useLeakGuard();

const pool = useEffectsDatabase('commit-interval');
let kafka: Kafka;
beforeAll(() => {
  kafka = testKafka(sharedKafkaBrokers());
});
const running = new Set<EventConsumer>();
afterAll(() => Promise.all([...running].map((consumer) => consumer.stop())));

/** A consumer of `<prefix>order.events` whose handler records each event in `effects`. */
function startConsumer(prefix: string, commitIntervalMs: number): EventConsumer {
  const consumer = startEventConsumer<pg.PoolClient>({
    source: '/commit-interval-test',
    groupId: `${prefix}consumer`,
    kafka: { brokers: sharedKafkaBrokers(), topicPrefix: prefix, topicLayout: { partitions: 1 } },
    aggregateTypes: ['order'],
    transaction: transactionOn(pool()),
    handlers: {
      [ORDER_CREATED]: async (tx, { id }) => {
        await tx.query('insert into effects (event_id) values ($1)', [id]);
        return 'STORED';
      },
    },
    logger: pino({ level: 'silent' }),
    registry: createMetricsRegistry('commit-interval-test'),
    commitIntervalMs,
  });
  running.add(consumer);
  return consumer;
}

async function stopConsumer(consumer: EventConsumer): Promise<void> {
  running.delete(consumer);
  await consumer.stop();
}

/** The group's committed offset of the topic's only partition; -1 when it committed none. */
async function committedOffset(prefix: string, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [committed] = await admin.fetchOffsets({ groupId: `${prefix}consumer`, topics: [topic] });
    return Number(committed?.partitions.find((p) => p.partition === 0)?.offset ?? -1);
  } finally {
    await admin.disconnect();
  }
}

const effectCount = async () =>
  (await pool().query<{ n: number }>('select count(*)::int as n from effects')).rows[0]?.n ?? 0;

/** Produce the events one at a time, each only once the one before was applied: a chunk each. */
async function applyOneByOne(topic: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const before = await effectCount();
    await produce(kafka, topic, [orderCreated(`one-by-one-${i}`)]);
    await eventually(
      `event ${i} is applied`,
      async () => ((await effectCount()) > before ? true : undefined),
      60_000,
    );
  }
}

describe('a consumer commits its offsets on an interval, when idle and on stop', () => {
  it('commits nothing per chunk, everything on stop, and the next member starts after it', {
    timeout: 180_000,
  }, async () => {
    const prefix = `commit-stop-${randomBytes(4).toString('hex')}.`;
    const topic = await createOrderTopics(kafka, prefix);
    // An interval longer than the test: only the stop can commit.
    const first = startConsumer(prefix, 600_000);
    await applyOneByOne(topic, 4);
    expect(first.health()).toMatchObject({ applied: 4, duplicates: 0 });
    // Four chunks applied, and not one OffsetCommit for them.
    expect(await committedOffset(prefix, topic)).toBe(-1);

    await stopConsumer(first);
    expect(await committedOffset(prefix, topic)).toBe(4);

    // The next member of the group starts after the committed offsets: nothing comes again.
    const next = startConsumer(prefix, 600_000);
    await applyOneByOne(topic, 1);
    expect(next.health()).toMatchObject({ applied: 1, duplicates: 0 });
    await stopConsumer(next);
    expect(await committedOffset(prefix, topic)).toBe(5);
  });

  it('commits the applied offsets within about an interval once the stream goes idle', {
    timeout: 120_000,
  }, async () => {
    const INTERVAL_MS = 1000;
    const prefix = `commit-idle-${randomBytes(4).toString('hex')}.`;
    const topic = await createOrderTopics(kafka, prefix);
    const consumer = startConsumer(prefix, INTERVAL_MS);
    await applyOneByOne(topic, 3);
    // Margin for a busy 2-core machine: the admin round trips and a late timer, not more intervals.
    await eventually(
      'the idle stream is committed to its end',
      async () => ((await committedOffset(prefix, topic)) === 3 ? true : undefined),
      INTERVAL_MS + 15_000,
    );
    expect(consumer.health()).toMatchObject({ applied: 3, duplicates: 0 });
  });
});
