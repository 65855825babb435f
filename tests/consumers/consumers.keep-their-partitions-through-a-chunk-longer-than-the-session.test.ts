// A chunk may take longer than the group's session timeout: billing voiding many payments one
// after another while it catches up, say. The consumer heartbeats while the chunk runs, so the
// group does not take this member for dead: no rebalance, and no redelivery of a chunk that
// committed. Before, the consumer heartbeat only between chunks: the broker dropped the member
// mid-chunk, the offset commit after COMMIT was refused, and the chunk came again (every event a
// duplicate).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ORDER_CREATED } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { type EventConsumer, startEventConsumer } from '@outbox/inbox';
import { transactionOn } from '@outbox/runtime/database';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, expect, it } from 'vitest';
import {
  createOrderTopics,
  groupCaughtUp,
  orderCreated,
  produce,
  testKafka,
  useEffectsDatabase,
} from './support.ts';

useLeakGuard();

/** The broker's smallest allowed session (group.min.session.timeout.ms, 6 s by default). */
const SESSION_TIMEOUT_MS = 6000;
/** Each event's handler takes this long: the chunk of 8 takes twice the session timeout. */
const HANDLER_MS = 1500;
const EVENTS = 8;

const pool = useEffectsDatabase('long-chunk');
let consumer: EventConsumer | undefined;
afterAll(() => consumer?.stop());

it('applies a chunk that takes twice the session timeout once, without a rebalance or redelivery', {
  timeout: 180_000,
}, async () => {
  const kafka = testKafka(sharedKafkaBrokers());
  const prefix = `long-chunk-${randomBytes(4).toString('hex')}.`;
  const topic = await createOrderTopics(kafka, prefix);
  // Produced before the consumer starts: one batch, one chunk of all of them.
  const events = Array.from({ length: EVENTS }, (_, i) => orderCreated(`slow-${i}`));
  await produce(kafka, topic, events);

  const calls: string[] = [];
  const groupId = `${prefix}consumer`;
  consumer = startEventConsumer<pg.PoolClient>({
    source: '/long-chunk-test',
    groupId,
    kafka: { brokers: sharedKafkaBrokers(), topicPrefix: prefix, topicLayout: { partitions: 1 } },
    aggregateTypes: ['order'],
    transaction: transactionOn(pool()),
    handlers: {
      [ORDER_CREATED]: async (tx, { id }) => {
        calls.push(id);
        await sleep(HANDLER_MS);
        await tx.query('insert into effects (event_id) values ($1)', [id]);
        return 'STORED';
      },
    },
    logger: pino({ level: 'silent' }),
    registry: createMetricsRegistry('long-chunk-test'),
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    heartbeatIntervalMs: 1000,
  });

  await eventually(
    'the group committed the chunk',
    // The coordinator may still be loading the group's offsets: not yet, then.
    async () => ((await groupCaughtUp(kafka, groupId, [topic]).catch(() => false)) ? true : undefined),
    120_000,
  );
  const { rows } = await pool().query('select count(*)::int as n from effects');
  expect(rows[0].n).toBe(EVENTS);
  // One chunk, applied once: each handler ran once and nothing came back as a redelivery.
  expect(calls).toEqual(events.map((event) => event.id));
  expect(consumer.health()).toMatchObject({ status: 'ok', applied: EVENTS, duplicates: 0 });
});
