// A consumer service retries its start-up while Kafka is away or refuses it. A start-up that
// fails after its producer connected must close what it opened, or each retry leaves another
// producer (and its sockets to the broker) behind for the life of the process.
import { randomBytes } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { runConsumer } from '@outbox/inbox';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';

// Registered first: checks, after everything else, that no socket is left open.
useLeakGuard();

describe('a consumer start-up that fails after its producer connected', () => {
  it('closes its Kafka clients, retry after retry', { timeout: 90_000 }, async () => {
    fixKafkajsIdleTimerLoop();
    const kafka = new Kafka({
      clientId: 'start-up-leak',
      brokers: sharedKafkaBrokers(),
      logLevel: logLevel.NOTHING,
    });
    const topic = `start-up-leak-${randomBytes(3).toString('hex')}`;
    for (let retry = 0; retry < 3; retry++) {
      // The step after the producer's connect fails: the consumer cannot even be created.
      const start = runConsumer({
        kafka,
        groupId: '',
        topics: [topic],
        topicLayout: { partitions: 1 },
        logger: pino({ level: 'silent' }),
        handleChunk: async () => [],
      });
      await expect(start).rejects.toThrow(/groupId/);
    }
  });
});
