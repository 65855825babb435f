// An event whose `ce_time` is not a date (a foreign producer's, say) is still applied: the handler
// does not read the time. Only the metrics do (commit-to-consume latency), and they run after
// COMMIT: they must never make a committed chunk look failed. Before, the histogram threw on NaN
// after COMMIT, the loop logged "rolled back, retrying" for a chunk that had committed, and the
// re-run counted the event as a duplicate instead of applied.
import { randomBytes } from 'node:crypto';
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
import { createOrderTopics, orderCreated, produce, testKafka, useEffectsDatabase } from './support.ts';

useLeakGuard();

const pool = useEffectsDatabase('not-a-date');
let consumer: EventConsumer | undefined;
afterAll(() => consumer?.stop());

it('applies an event whose ce_time is "not-a-date" once, and never logs its committed chunk as rolled back', {
  timeout: 120_000,
}, async () => {
  const kafka = testKafka(sharedKafkaBrokers());
  const prefix = `not-a-date-${randomBytes(4).toString('hex')}.`;
  const topic = await createOrderTopics(kafka, prefix);
  const event = { ...orderCreated('timeless'), time: 'not-a-date' };
  await produce(kafka, topic, [event]);

  const logs: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const registry = createMetricsRegistry('not-a-date-test');
  consumer = startEventConsumer<pg.PoolClient>({
    source: '/not-a-date-test',
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
    logger,
    registry,
    retry: { baseMs: 50, capMs: 200 },
  });

  const running = consumer;
  const health = await eventually('the event is handled', async () => {
    const now = running.health();
    return now.applied + now.duplicates > 0 ? now : undefined;
  });
  expect(health).toMatchObject({ status: 'ok', applied: 1, duplicates: 0, deadLettered: 0 });
  const { rows } = await pool().query('select event_id::text from effects');
  expect(rows).toEqual([{ event_id: event.id }]);
  expect(logs.filter((line) => /rolled back/.test(line.msg))).toEqual([]);
  expect(await registry.getSingleMetricAsString('consumer_events_total')).toMatch(
    /consumer_events_total(_total)?\{[^}]*result="applied"[^}]*\} 1/,
  );
});
