// A backlog on a few busy aggregates (an outage's worth of one hot order stream): two relays send
// each aggregate's events many to a batch, claim after claim, and still exactly once and in seq
// order per aggregate (packages/outbox/src/claimSql.ts). A claim of one event per aggregate would
// need a thousand batches here.
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstOccurrencesByKey,
  idsByAggregate,
  metricValue,
  startRelay,
  statusCounts,
  topicPrefix,
} from './relayProcess.ts';

useLeakGuard();

const EVENTS = 4000;
const AGGREGATES = 4;
const BATCH = 100;
const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-busy');
let db: TestDatabase;
const relays: ServiceProcess[] = [];

beforeAll(async () => {
  db = await createOutboxDatabase('relay_busy');
  await insertEvents(db.url, { count: EVENTS, aggregates: AGGREGATES });
});

afterAll(async () => {
  await Promise.allSettled(relays.map((relay) => relay.stop()));
  await db?.drop();
});

describe(`two relays draining ${EVENTS} events of ${AGGREGATES} aggregates`, () => {
  it('send many events of an aggregate per batch, each once and in seq order', {
    timeout: 180_000,
  }, async () => {
    for (const id of ['a', 'b'])
      relays.push(
        await startRelay('relay-busy', {
          DATABASE_URL: db.url,
          KAFKA_BROKERS: brokers,
          KAFKA_TOPIC_PREFIX: prefix,
          RELAY_ID: `relay-busy-${id}`,
          RELAY_BATCH_SIZE: String(BATCH),
        }),
      );
    await eventually(
      'every outbox row published',
      async () => ((await statusCounts(db.url)).published === EVENTS ? true : undefined),
      150_000,
    );

    // Claims, publishes and marks of both relays: a few per full batch, not per event.
    let steps = 0;
    for (const relay of relays)
      steps += await metricValue(relay, 'outbox_relay_batch_duration_seconds_count');
    expect(steps).toBeLessThan((EVENTS / BATCH) * 3 * 4);

    const rows = await outboxRows(db.url);
    const messages = await readTopic(brokers, `${prefix}order.events`, {
      until: (read) => new Set(read.map((m) => m.eventId)).size >= EVENTS,
      timeoutMs: 60_000,
    });
    const { byKey, counts } = firstOccurrencesByKey(messages);
    expect([...counts.keys()].sort()).toEqual(rows.map((row) => row.id).sort());
    expect(byKey).toEqual(idsByAggregate(rows));
  });
});
