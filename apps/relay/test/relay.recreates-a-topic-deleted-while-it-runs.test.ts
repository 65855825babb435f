// The publisher remembers which topics it has ensured. A topic deleted while the relay runs (by
// an operator, a retention clean-up gone wrong) must not stop the relay until a restart: the
// failed send makes it forget, ensure the topic again, and carry on.
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, statusCounts, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-topic-deleted');
const topic = `${prefix}order.events`;
let db: TestDatabase;
let relay: ServiceProcess | undefined;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_topic_deleted');
});

afterAll(async () => {
  await relay?.kill();
  await db?.drop();
});

describe('a topic deleted while the relay runs', () => {
  it('is created again and the events after it are published', { timeout: 120_000 }, async () => {
    relay = await startRelay('relay-topic-deleted', {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: prefix,
      RELAY_ID: 'relay-topic-deleted',
      RELAY_POLL_INTERVAL_MS: '200',
    });
    await insertEvents(db.url, { count: 5, aggregates: 5, aggregateIdPrefix: 'before-' });
    await eventually(
      'the first 5 events to be published',
      async () => ((await statusCounts(db.url)).published === 5 ? true : undefined),
      30_000,
    );

    const admin = createKafka({
      clientId: 'topic-deleter',
      brokers,
      logger: pino({ level: 'silent' }),
    }).admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
      await eventually(
        'the topic to be gone',
        async () => (!(await admin.listTopics()).includes(topic) ? true : undefined),
        30_000,
      );
    } finally {
      await admin.disconnect();
    }

    await insertEvents(db.url, { count: 5, aggregates: 5, aggregateIdPrefix: 'after-' });
    await eventually(
      'the 5 events after the deletion to be published',
      async () => ((await statusCounts(db.url)).published === 10 ? true : undefined),
      60_000,
    );
    const messages = await readTopic(brokers, topic, { timeoutMs: 30_000 });
    expect(messages.filter((message) => message.key?.startsWith('after-')).length).toBe(5);
  });
});
