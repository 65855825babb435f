import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { waitForCoordinators } from '@outbox/devstack/kafka-probe';
import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import { loadConfig } from '@outbox/runtime/config';
import { createKafkaClient, partitionOf } from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import { kafkaSecurity, kafkaSecuritySettings, refineKafkaSecurity } from '@outbox/runtime/kafka-security';
import type { Kafka } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

// A broker of its own with two more listeners: SASL_PLAINTEXT, which takes only the user `relay`
// (with PLAIN or SCRAM), and SSL, with a certificate signed by a CA of its own. Each client is made
// as the apps make theirs: from the environment, through the config schema; kafkajs and, through
// the same settings, @platformatic/kafka (KAFKA_CLIENT=platformatic).
useLeakGuard();

const groupId = `tls-sasl-${randomUUID()}`;
const schema = refineKafkaSecurity(z.object(kafkaSecuritySettings));
let testBroker: TestBroker;
let saslBrokers: string[];
let tlsBrokers: string[];
const logLines: string[] = [];
const logger = pino(
  { level: 'warn' },
  new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  }),
);

function clientFromEnvironment(env: Record<string, string>, brokers: string[], retries = 0): Kafka {
  return createKafka({
    clientId: `tls-sasl-test-${randomUUID()}`,
    brokers,
    logger,
    retry: { retries },
    security: kafkaSecurity(loadConfig('tls-sasl-test', schema, env)),
  });
}

/** Creates a topic, sends one message to it and reads it back in a new consumer group. */
async function producesAndConsumes(kafka: Kafka, group: string): Promise<void> {
  const topic = `tls-sasl-${randomUUID()}`;
  const admin = kafka.admin();
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: group });
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'order-1', value: 'delivered' }] });
    const received: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        received.push(String(message.value));
      },
    });
    await eventually('the message consumed', async () => (received.length > 0 ? true : undefined), 90_000);
    expect(received).toEqual(['delivered']);
  } finally {
    await consumer.disconnect();
    await producer.disconnect();
    await admin.disconnect();
  }
}

beforeAll(async () => {
  testBroker = await startTestBroker('tls-sasl', {
    sasl: { port: await freePort(), users: { relay: 'relay-secret' } },
    tlsPort: await freePort(),
  });
  saslBrokers = [`127.0.0.1:${testBroker.broker.sasl?.port}`];
  tlsBrokers = [`127.0.0.1:${testBroker.broker.tlsPort}`];
  // Through the PLAINTEXT listener: the offsets topic is created and loaded before a group joins.
  await waitForCoordinators(testBroker.broker.brokers, [groupId], 120_000);
});

afterAll(async () => {
  await testBroker?.dispose();
});

describe('a Kafka client made from the KAFKA_SASL_* settings', () => {
  it.each(['plain', 'scram-sha-256', 'scram-sha-512'])(
    'produces and consumes on a listener that requires SASL, with the right credentials (%s)',
    async (mechanism) => {
      const env = {
        KAFKA_SASL_MECHANISM: mechanism,
        KAFKA_SASL_USERNAME: 'relay',
        KAFKA_SASL_PASSWORD: 'relay-secret',
      };
      await producesAndConsumes(clientFromEnvironment(env, saslBrokers, 8), `${groupId}-${mechanism}`);
    },
    120_000,
  );

  it('fails with wrong credentials, and the log names the settings to check', async () => {
    const env = {
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: 'relay',
      KAFKA_SASL_PASSWORD: 'not-the-password',
    };
    const admin = clientFromEnvironment(env, saslBrokers).admin();
    await expect(admin.connect()).rejects.toThrow(/SASL PLAIN authentication failed/);
    await admin.disconnect();
    expect(logLines.join('')).toMatch(/KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/);
  });

  it('is refused by that listener without the settings', async () => {
    const admin = clientFromEnvironment({}, saslBrokers).admin();
    // Connecting takes only ApiVersions, which a SASL listener answers before authentication.
    await expect(admin.connect().then(() => admin.listTopics())).rejects.toThrow();
    await admin.disconnect();
  });
});

describe('a Kafka client made from the KAFKA_SSL settings', () => {
  it('produces and consumes over TLS, trusting the CA of KAFKA_SSL_CA_FILE', async () => {
    const env = { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: testBroker.broker.caFile };
    await producesAndConsumes(clientFromEnvironment(env, tlsBrokers, 8), `${groupId}-tls`);
  }, 120_000);

  it('refuses a broker whose certificate the system CAs did not sign', async () => {
    const admin = clientFromEnvironment({ KAFKA_SSL: 'true' }, tlsBrokers).admin();
    await expect(admin.connect()).rejects.toThrow(/certificate/i);
    await admin.disconnect();
  });
});

/**
 * The @platformatic/kafka adapter (KAFKA_CLIENT=platformatic) from the same settings: its admin
 * creates a topic and its producer has a message acknowledged, read back by a kafkajs client on
 * the PLAINTEXT listener.
 */
async function platformaticProducesOver(env: Record<string, string>, brokers: string[]): Promise<void> {
  const client = createKafkaClient({
    client: 'platformatic',
    clientId: `tls-sasl-platformatic-${randomUUID()}`,
    brokers,
    logger,
    retry: { retries: 8 },
    security: kafkaSecurity(loadConfig('tls-sasl-test', schema, env)),
  });
  const topic = `tls-sasl-platformatic-${randomUUID()}`;
  const admin = client.admin();
  const producer = client.producer();
  try {
    await admin.connect();
    await admin.createTopics([{ topic, partitions: 1, replicationFactor: 1, configs: {} }]);
    const acks = await producer.send([
      { topic, messages: [{ key: 'order-1', value: 'delivered', partition: partitionOf('order-1', 1) }] },
    ]);
    expect(acks.map((ack) => ack.partition)).toEqual([0]);
    expect(await admin.topicOffsets(topic)).toEqual([{ partition: 0, low: '0', high: '1' }]);
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
}

describe('the @platformatic/kafka adapter made from the same settings', () => {
  it.each(['plain', 'scram-sha-256', 'scram-sha-512'])(
    'creates a topic and has a message acknowledged on a listener that requires SASL (%s)',
    async (mechanism) => {
      await platformaticProducesOver(
        {
          KAFKA_SASL_MECHANISM: mechanism,
          KAFKA_SASL_USERNAME: 'relay',
          KAFKA_SASL_PASSWORD: 'relay-secret',
        },
        saslBrokers,
      );
    },
    120_000,
  );

  it('is refused by that listener with wrong credentials', async () => {
    const admin = createKafkaClient({
      client: 'platformatic',
      clientId: `tls-sasl-platformatic-${randomUUID()}`,
      brokers: saslBrokers,
      logger,
      retry: { retries: 0 },
      security: kafkaSecurity(
        loadConfig('tls-sasl-test', schema, {
          KAFKA_SASL_MECHANISM: 'plain',
          KAFKA_SASL_USERNAME: 'relay',
          KAFKA_SASL_PASSWORD: 'not-the-password',
        }),
      ),
    }).admin();
    await expect(admin.connect().then(() => admin.listTopics())).rejects.toThrow();
    await admin.disconnect();
  });

  it('creates a topic and has a message acknowledged over TLS, trusting the CA of KAFKA_SSL_CA_FILE', async () => {
    await platformaticProducesOver(
      { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: testBroker.broker.caFile },
      tlsBrokers,
    );
  }, 120_000);

  it('refuses a broker whose certificate the system CAs did not sign', async () => {
    const admin = createKafkaClient({
      client: 'platformatic',
      clientId: `tls-sasl-platformatic-${randomUUID()}`,
      brokers: tlsBrokers,
      logger,
      retry: { retries: 0 },
      security: kafkaSecurity(loadConfig('tls-sasl-test', schema, { KAFKA_SSL: 'true' })),
    }).admin();
    await expect(admin.connect().then(() => admin.listTopics())).rejects.toThrow();
    await admin.disconnect();
  });
});
