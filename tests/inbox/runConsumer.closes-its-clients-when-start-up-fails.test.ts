// A consumer service retries its start-up while Kafka is away or refuses it. A start-up that
// fails after its producer connected must close what it opened, or each retry leaves another
// producer (and its sockets to the broker) behind for the life of the process.
import { randomBytes } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { runConsumer } from '@outbox/inbox';
import { createKafkaClient, type KafkaClient, type KafkaClientName } from '@outbox/runtime/kafka';
import { fixKafkajsIdleTimerLoop, kafkajsClient } from '@outbox/runtime/kafka/kafkajs';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';

// Registered first: checks, after everything else, that no socket is left open.
useLeakGuard();

/** The client under test, kafkajs as a bare client with its logs off, or @platformatic/kafka. */
function clientOf(name: KafkaClientName): KafkaClient {
  if (name === 'platformatic')
    return createKafkaClient({
      client: name,
      clientId: 'start-up-leak',
      brokers: sharedKafkaBrokers(),
      logger: pino({ level: 'silent' }),
    });
  fixKafkajsIdleTimerLoop();
  return kafkajsClient(
    new Kafka({ clientId: 'start-up-leak', brokers: sharedKafkaBrokers(), logLevel: logLevel.NOTHING }),
  );
}

describe.each(['kafkajs', 'platformatic'] as const)(
  'a consumer start-up on %s that fails after its producer connected',
  (name) => {
    it('closes its Kafka clients, retry after retry', { timeout: 90_000 }, async () => {
      const client = clientOf(name);
      const topic = `start-up-leak-${randomBytes(3).toString('hex')}`;
      for (let retry = 0; retry < 3; retry++) {
        // The step after the producer's connect fails: the consumer cannot even be created.
        const start = runConsumer({
          client,
          groupId: '',
          topics: [topic],
          topicLayout: { partitions: 1 },
          logger: pino({ level: 'silent' }),
          handleChunk: async () => [],
        });
        await expect(start).rejects.toThrow(/groupId/);
      }
    });
  },
);
