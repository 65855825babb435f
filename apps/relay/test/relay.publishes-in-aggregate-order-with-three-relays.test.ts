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
  startRelay,
  statusCounts,
  topicPrefix,
} from './relayProcess.ts';

useLeakGuard();

const EVENTS = 10_000;
const AGGREGATES = 500;
const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-3');
let db: TestDatabase;
const relays: ServiceProcess[] = [];

beforeAll(async () => {
  db = await createOutboxDatabase('relay_three');
  await insertEvents(db.url, { count: EVENTS, aggregates: AGGREGATES });
});

afterAll(async () => {
  await Promise.allSettled(relays.map((relay) => relay.stop()));
  await db?.drop();
});

describe('three relays draining one outbox', () => {
  it('publishes every event exactly once, in seq order per aggregate', { timeout: 120_000 }, async () => {
    const started = Date.now();
    relays.push(
      ...(await Promise.all(
        ['a', 'b', 'c'].map((id) =>
          startRelay('relay-three', {
            DATABASE_URL: db.url,
            KAFKA_BROKERS: brokers,
            KAFKA_TOPIC_PREFIX: prefix,
            RELAY_ID: `relay-${id}`,
            RELAY_BATCH_SIZE: '100',
          }),
        ),
      )),
    );
    await eventually(
      'every outbox row published',
      async () => ((await statusCounts(db.url)).published === EVENTS ? true : undefined),
      90_000,
    );
    const elapsed = Date.now() - started;
    console.log(`three relays published ${EVENTS} events over ${AGGREGATES} aggregates in ${elapsed} ms`);

    const rows = await outboxRows(db.url);
    expect(rows.filter((row) => row.status !== 'published')).toEqual([]);
    // All three relays did part of the work (each marks what it published; the lease owner is
    // cleared on publish, so look at the relays' own counters instead).
    const perRelay = await Promise.all(
      relays.map(
        async (relay) =>
          ((await (await fetch(`${relay.url}/healthz`)).json()) as { published: number }).published,
      ),
    );
    console.log(`published per relay: ${perRelay.join(', ')}`);
    expect(perRelay.reduce((a, b) => a + b, 0)).toBe(EVENTS);

    const messages = await readTopic(brokers, `${prefix}order.events`, { timeoutMs: 60_000 });
    const { byKey, counts, duplicateIds } = firstOccurrencesByKey(messages);
    // Exactly once: no fault happened, so no event may be on the topic twice.
    expect(duplicateIds).toBe(0);
    expect(messages).toHaveLength(EVENTS);
    expect([...counts.keys()].sort()).toEqual(rows.map((row) => row.id).sort());
    // Per aggregate, the topic order is the outbox seq order.
    const expected = idsByAggregate(rows);
    expect(byKey.size).toBe(AGGREGATES);
    for (const [aggregateId, ids] of expected) expect(byKey.get(aggregateId), aggregateId).toEqual(ids);
  });
});
