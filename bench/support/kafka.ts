/** The broker and the kafkajs clients the benchmarks use. */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { kafkaVersion } from '@outbox/devstack/jars';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import type { Kafka } from 'kafkajs';
import { pino } from 'pino';

export type { TestBroker };

/**
 * A real single-node broker of the benchmark's own (the test broker: KRaft, C1-only JVM,
 * fresh data dir under .local/kafka/, deleted by dispose()).
 */
export async function startBenchBroker(label: string): Promise<TestBroker & { version: string }> {
  const started = await startTestBroker(label);
  return { ...started, version: kafkaVersion() };
}

/** The broker as a results file describes it. */
export const benchBrokerInfo = () => ({
  version: kafkaVersion(),
  broker: 'devstack test broker: single node, KRaft, C1-only JVM, 768 MB heap',
});

/** kafkajs through the project's one factory, logging errors only (to stderr). */
export function benchKafka(clientId: string, brokers: string[]): Kafka {
  return createKafka({ clientId, brokers, logger: pino({ level: 'error' }, pino.destination(2)) });
}

/** A topic name nobody else uses. */
export const freshName = (label: string) => `bench-${label}-${randomBytes(3).toString('hex')}`;

/** A topic of the benchmark's own; `configEntries` are topic configs (e.g. message.timestamp.type). */
export async function createTopic(
  kafka: Kafka,
  topic: string,
  numPartitions: number,
  configEntries: { name: string; value: string }[] = [],
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    // On a busy machine the wait for leaders can see the new topic's metadata before the broker
    // hosts its partitions (UNKNOWN_TOPIC_OR_PARTITION): ask again, the topic exists by then.
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.createTopics({
          waitForLeaders: true,
          topics: [{ topic, numPartitions, replicationFactor: 1, configEntries }],
        });
        return;
      } catch (err) {
        if (attempt >= 10 || (err as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw err;
        await sleep(500);
      }
    }
  } finally {
    await admin.disconnect();
  }
}
