import { setTimeout as sleep } from 'node:timers/promises';
import { ensureTopics, type TopicLayout } from '@outbox/runtime/kafka';
import { KafkajsAdmin } from '@outbox/runtime/kafka/kafkajs';
import { type Admin, Kafka, type KafkaConfig, logLevel } from 'kafkajs';

/**
 * Runs `work` with an admin client of `brokers`, disconnected afterwards whatever happens. Quiet:
 * the refused connections of a broker that is booting or down are the expected answer, not errors.
 */
export async function withKafkaAdmin<T>(
  brokers: string[],
  work: (admin: Admin) => Promise<T>,
  config: Partial<KafkaConfig> = {},
): Promise<T> {
  const admin = new Kafka({
    clientId: 'devstack-admin',
    ...config,
    brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    return await work(admin);
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * One readiness probe: can a client connect and read cluster metadata? A KRaft broker opens its
 * client listener only once it is unfenced, and serves metadata only once it caught up with the
 * controller, so this succeeding means producers and consumers can start.
 *
 * Short timeouts and no retries: the caller polls, and a probe must never outlive its deadline.
 */
export async function probeKafka(brokers: string[], timeoutMs = 2000): Promise<void> {
  await withKafkaAdmin(brokers, (admin) => admin.listTopics(), {
    connectionTimeout: Math.min(1000, timeoutMs),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
}

/**
 * Waits until the broker's coordinators serve these consumer groups and hand out producer ids.
 * A broker that just started (or restarted) answers metadata before it has loaded
 * `__consumer_offsets`; clients that start then get "The coordinator is loading" (or "not
 * available" while that topic is first created) and kafkajs logs each retry as an ERROR. Nothing
 * is wrong, so the demo waits here, quietly, before it starts the services.
 */
export async function waitForCoordinators(
  brokers: string[],
  groupIds: string[],
  timeoutMs = 60_000,
): Promise<void> {
  const kafka = new Kafka({
    clientId: 'devstack-coordinator-probe',
    brokers,
    connectionTimeout: 1000,
    requestTimeout: 2000,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  });
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const admin = kafka.admin();
    const producer = kafka.producer({ idempotent: true, retry: { retries: 1 } });
    try {
      await admin.connect();
      await admin.listTopics(); // reads the cluster's metadata, which finding a coordinator needs
      await admin.describeGroups(groupIds); // FindCoordinator + DescribeGroups per group
      await producer.connect(); // InitProducerId
      return;
    } catch (error) {
      lastError = error;
      await sleep(250);
    } finally {
      await producer.disconnect().catch(() => {});
      await admin.disconnect().catch(() => {});
    }
  }
  throw new Error(
    `Kafka's group coordinator was not ready within ${timeoutMs / 1000} s: ${String(lastError)}`,
  );
}

/**
 * Creates the system's topics (and their dead-letter topics) before the services start. On a fresh
 * broker each service would otherwise create them itself, all at once: the losers of that race get
 * "Topic creation errors" and "This server does not host this topic-partition", which kafkajs logs
 * as ERRORs and the services retry. Harmless, and exactly what a newcomer must not see first.
 */
export async function createTopicsQuietly(
  brokers: string[],
  topics: string[],
  layout: TopicLayout,
): Promise<void> {
  await withKafkaAdmin(brokers, (admin) => ensureTopics(new KafkajsAdmin(admin), topics, layout));
}
