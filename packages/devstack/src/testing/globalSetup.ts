import { fixKafkajsIdleTimerLoop } from '@outbox/events';
import type { TestProject } from 'vitest/node';
import { startTestBroker } from './testBroker.ts';

/**
 * One real Kafka broker for the whole test run. Test files share it but never a topic or a
 * consumer group (each uses its own prefix). Tests that kill a broker start their own instead,
 * so they cannot disturb the others. TEST_KAFKA_BROKERS=host:port reuses a running broker.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  fixKafkajsIdleTimerLoop(); // the broker's readiness probe uses kafkajs
  if (process.env.TEST_KAFKA_BROKERS) {
    project.provide('kafkaBrokers', process.env.TEST_KAFKA_BROKERS.split(','));
    return async () => {};
  }
  const { broker, dispose } = await startTestBroker('test');
  project.provide('kafkaBrokers', broker.brokers);
  return dispose;
}
