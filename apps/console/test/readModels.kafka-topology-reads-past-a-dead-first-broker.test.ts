// The Kafka panel on a cluster whose first listed broker is dead (killed in the walkthrough's
// cluster step): the topology reader must reach the brokers that live, not report Kafka as down.
// The dead broker is a closed port listed first; the live one is the real test broker.
import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { createLogger } from '@outbox/runtime/logger';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaTopologyReader } from '../src/readModels/kafkaTopology.ts';

useLeakGuard();

const deadBroker = `127.0.0.1:${await freePort()}`;
const reader = kafkaTopologyReader({
  brokers: [deadBroker, ...sharedKafkaBrokers()],
  topicPrefix: 'console-dead-seed.',
  logger: createLogger('console-test', 'silent'),
});

afterAll(() => reader.close());

describe('the Kafka panel with the first listed broker dead', () => {
  it('lists the live brokers instead of saying Kafka does not answer', async () => {
    const topology = await reader.read();
    expect(topology.error).toBeUndefined();
    expect(topology.brokers.length).toBeGreaterThan(0);
  });
});
