import { setTimeout as sleep } from 'node:timers/promises';
import type { KafkaBroker } from '@outbox/devstack/kafka-broker';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstOccurrencesByKey,
  idsByAggregate,
  relayHealth,
  startRelay,
  statusCounts,
  topicPrefix,
} from './relayProcess.ts';

useLeakGuard();

// This file kills its broker, so it runs its own instead of the shared one.
const BATCHES = 20;
const PER_BATCH = 100;
const AGGREGATES = 10;
const prefix = topicPrefix('relay-brokerkill');
let testBroker: TestBroker;
let broker: KafkaBroker;
let db: TestDatabase;
let relay: ServiceProcess;

beforeAll(async () => {
  testBroker = await startTestBroker('relay-brokerkill');
  broker = testBroker.broker;
  db = await createOutboxDatabase('relay_brokerkill');
  relay = await startRelay('relay-brokerkill', {
    DATABASE_URL: db.url,
    KAFKA_BROKERS: broker.brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    RELAY_ID: 'relay-brokerkill',
    RELAY_POLL_INTERVAL_MS: '500',
  });
});

afterAll(async () => {
  await relay?.stop();
  await db?.drop();
  await testBroker?.dispose();
});

describe('broker killed with kill -9 while events stream in', () => {
  it('publishes every committed event, in seq order per aggregate, once the broker is back', {
    timeout: 110_000,
  }, async () => {
    const statuses: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const status = await relayHealth(relay).then(
          (health) => health.status,
          () => 'unreachable',
        );
        if (statuses.at(-1) !== status) statuses.push(status);
        await sleep(100);
      }
    })();

    let killedAt = 0;
    for (let batch = 0; batch < BATCHES; batch++) {
      await insertEvents(db.url, { count: PER_BATCH, aggregates: AGGREGATES });
      if (batch === 5) {
        // Mid-stream: some events are out, the topic exists.
        await eventually(
          'some events published',
          async () => ((await statusCounts(db.url)).published ?? 0) > 0 || undefined,
          20_000,
        );
        await broker.kill();
        killedAt = Date.now();
        expect(broker.isRunning()).toBe(false);
      }
      await sleep(250);
    }
    const atOutage = await statusCounts(db.url);
    console.log(`all ${BATCHES * PER_BATCH} committed; during the outage: ${JSON.stringify(atOutage)}`);
    expect(atOutage.published ?? 0).toBeLessThan(BATCHES * PER_BATCH);
    await eventually(
      'relay reports degraded',
      async () => ((await relayHealth(relay)).status === 'degraded' ? true : undefined),
      30_000,
    );

    await broker.start();
    await broker.waitUntilReady(120_000);
    const restartedAfter = Date.now() - killedAt;
    await eventually(
      'every event published',
      async () => ((await statusCounts(db.url)).published === BATCHES * PER_BATCH ? true : undefined),
      60_000,
    );
    console.log(
      `broker down for ${restartedAfter} ms; everything published ${Date.now() - killedAt} ms after the kill`,
    );
    await eventually(
      'relay reports ok again',
      async () => ((await relayHealth(relay)).status === 'ok' ? true : undefined),
      10_000,
    );
    sampling = false;
    await sampler;
    // The sampler may have stopped before it saw what the wait above just saw: record that too.
    const last = (await relayHealth(relay)).status;
    if (statuses.at(-1) !== last) statuses.push(last);
    console.log(`/healthz went: ${statuses.join(' → ')}`);
    expect(statuses).toEqual(['ok', 'degraded', 'ok']);

    const rows = await outboxRows(db.url);
    const messages = await readTopic(broker.brokers, `${prefix}order.events`, { timeoutMs: 60_000 });
    const { byKey, counts, duplicateIds } = firstOccurrencesByKey(messages);
    console.log(
      `duplicates on the topic: ${duplicateIds} ids (${messages.length - rows.length} extra messages)`,
    );
    // Every committed event, each at least once, nothing foreign.
    expect([...counts.keys()].sort()).toEqual(rows.map((row) => row.id).sort());
    // Per aggregate, first occurrences are in seq order.
    for (const [aggregateId, ids] of idsByAggregate(rows))
      expect(byKey.get(aggregateId), aggregateId).toEqual(ids);
  });
});
