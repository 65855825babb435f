import { randomUUID } from 'node:crypto';
import { ORDER_CANCELLED, topicFor } from '@outbox/contracts';
import { orderEnvelope } from '@outbox/devstack/testing/order-envelope';
import { startTestCluster, type TestCluster } from '@outbox/devstack/testing/test-broker';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import type { RetryOptions } from 'kafkajs';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaPublisher, type OutgoingEvent } from '../src/engine/publisher.ts';

// The first probe of a real cluster found kafkajs 2.2.4 resolving every send() while 45 messages of
// a batch were never written (tulios/kafkajs#1303): when a partition's leader dies mid-send and the
// partition moves to a broker that already answered for its own partitions of the same batch,
// kafkajs' retry skips that broker, and with it the moved partition. A relay that marks rows
// published on such an ack loses events. This is that probe, run against the project's publisher.

const batches = 200;
const batchSize = 100;
const killBeforeBatch = 80;
const aggregates = 500;

let testCluster: TestCluster;

beforeAll(async () => {
  testCluster = await startTestCluster('publisher-failover');
}, 330_000);

afterAll(async () => {
  await testCluster?.dispose();
});

describe('the publisher on a three-node cluster (replication factor 3, min.insync.replicas 2)', () => {
  const spansAnElection: RetryOptions = { retries: 8, initialRetryTime: 300, maxRetryTime: 3000 };
  // Each client the relay can use (KAFKA_CLIENT): kafkajs with four retry budgets, @platformatic/kafka
  // with the relay's.
  it.each<['killed' | 'stopped', string, KafkaClientName, RetryOptions | undefined]>([
    ['killed', "with the relay's retries (shorter than a leader election)", 'kafkajs', undefined],
    ['killed', 'with retries long enough to span the election', 'kafkajs', spansAnElection],
    ['stopped', "with the relay's retries", 'kafkajs', undefined],
    ['stopped', 'with retries long enough to span the election', 'kafkajs', spansAnElection],
    ['killed', "with the relay's retries", 'platformatic', undefined],
    ['stopped', "with the relay's retries", 'platformatic', undefined],
  ])(
    'has in the log every event it acknowledged when partition 0’s leader is %s mid-stream, %s, through %s',
    { timeout: 300_000 },
    async (how, _, client, retry) => {
      const { cluster } = testCluster;
      const prefix = `failover-${randomUUID().slice(0, 8)}`;
      const topic = topicFor('order', prefix);
      const publisher = new KafkaPublisher({
        client,
        clientId: 'publisher-failover',
        brokers: cluster.brokers,
        topicPrefix: prefix,
        topicLayout: { partitions: 6, replicationFactor: 3 },
        logger: pino({ level: 'silent' }),
        ...(retry ? { retry } : {}),
      });
      const acknowledged = new Set<string>();
      let failedSends = 0;
      let killed: number | undefined;
      let fault: Promise<boolean> | undefined;
      try {
        for (let batch = 0; batch < batches; batch++) {
          if (batch === killBeforeBatch) {
            killed = await cluster.leaderOf(topic, 0);
            // killed: kill -9, a crash. stopped: a controlled shutdown (a rolling restart), which moves the
            // node's leaderships to the others while requests are in flight.
            // Not awaited: the sends go on while the node goes down.
            fault = how === 'killed' ? cluster.node(killed).kill() : cluster.node(killed).stop();
          }
          const events = Array.from({ length: batchSize }, (_, i) =>
            anEvent((batch * batchSize + i) % aggregates),
          );
          // As the relay does: a batch that failed is sent again, whole, until it is acknowledged.
          for (;;) {
            try {
              await publisher.publish(events);
              break;
            } catch {
              failedSends++;
            }
          }
          for (const event of events) acknowledged.add(event.id);
        }
      } finally {
        await fault;
        await publisher.disconnect();
      }

      const inTheLog = await readTopic(
        cluster.nodes.filter((node) => node.isRunning()).flatMap((node) => node.brokers),
        topic,
        { timeoutMs: 120_000 },
      );
      const ids = new Set(inTheLog.map((message) => message.eventId));
      const lost = [...acknowledged].filter((id) => !ids.has(id));
      console.log(
        `${client}: leader of partition 0 (node ${killed}) ${how} before batch ${killBeforeBatch}: ${acknowledged.size} acknowledged, ` +
          `${inTheLog.length} messages in the log, ${lost.length} lost, ${inTheLog.length - ids.size} duplicates, ` +
          `${failedSends} failed sends retried`,
      );
      expect(acknowledged.size).toBe(batches * batchSize);
      expect(lost).toEqual([]);

      // The killed node rejoins and catches up, ready for the next case.
      if (killed !== undefined) {
        await cluster.node(killed).start();
        await cluster.waitUntilReady(180_000);
      }
    },
  );

  it('creates the topics it needs replicated three times, acknowledged by two, never electing a stale replica', async () => {
    const prefix = `layout-${randomUUID().slice(0, 8)}`;
    const publisher = new KafkaPublisher({
      clientId: 'publisher-layout',
      brokers: testCluster.cluster.brokers,
      topicPrefix: prefix,
      topicLayout: { partitions: 6, replicationFactor: 3 },
      logger: pino({ level: 'silent' }),
    });
    try {
      await publisher.publish([anEvent(1)]);
    } finally {
      await publisher.disconnect();
    }
    const admin = createKafka({
      clientId: 'publisher-layout-check',
      brokers: testCluster.cluster.brokers,
      logger: pino({ level: 'silent' }),
    }).admin();
    await admin.connect();
    try {
      const topic = topicFor('order', prefix);
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(topics[0]?.partitions.map((p) => p.replicas.length)).toEqual([3, 3, 3, 3, 3, 3]);
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2 /* TOPIC */, name: topic }],
      });
      const config = Object.fromEntries(
        (resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]),
      );
      expect(config['min.insync.replicas']).toBe('2');
      expect(config['unclean.leader.election.enable']).toBe('false');
    } finally {
      await admin.disconnect();
    }
  });
});

function anEvent(aggregate: number): OutgoingEvent {
  const orderId = `00000000-0000-4000-8000-${String(aggregate).padStart(12, '0')}`;
  return orderEnvelope(ORDER_CANCELLED, { orderId, reason: 'failover test' });
}
