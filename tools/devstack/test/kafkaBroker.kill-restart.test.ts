import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaBroker } from '../src/kafkaBroker.ts';
import { freePort } from '../src/ports.ts';
import { isProcessAlive } from '../src/processes.ts';

// Timeouts are repeated here (not only in vitest.config.ts) so the file also works when vitest is
// run from the repo root, which does not load this package's config.
const hookTimeout = 180_000;
const testTimeout = 120_000;
const messageCount = 100;

/**
 * The guarantee the outbox relay relies on: what a broker acknowledged with acks=all survives the
 * broker crashing (kill -9, no shutdown hooks) and comes back, complete and in order, on restart.
 */
describe('KafkaBroker kill -9 and restart', () => {
  let dataDir: string;
  let broker: KafkaBroker;
  let kafka: Kafka;
  const topic = `kill-restart-${Date.now()}-${process.pid}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'devstack-kafka-'));
    broker = new KafkaBroker({ port: await freePort(), controllerPort: await freePort(), dataDir });
    await broker.start();
    await broker.waitUntilReady(90_000);
    kafka = new Kafka({ clientId: 'kill-restart-test', brokers: broker.brokers, logLevel: logLevel.NOTHING });
  }, hookTimeout);

  afterAll(async () => {
    const pid = broker?.pid;
    await broker?.stop();
    if (pid !== undefined) expect(isProcessAlive(pid)).toBe(false);
    expect(broker?.isRunning()).toBe(false);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, hookTimeout);

  it(
    'keeps every acknowledged message, in order, across a kill -9',
    async () => {
      const expected = Array.from({ length: messageCount }, (_, i) => `message-${i}`);

      const admin = kafka.admin();
      await admin.connect();
      try {
        await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      } finally {
        await admin.disconnect();
      }

      const producer = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await producer.connect();
      try {
        // Ten awaited batches: each is acknowledged by the broker (acks=all) before the next is sent.
        for (let batch = 0; batch < 10; batch++) {
          const values = expected.slice(batch * 10, batch * 10 + 10);
          await producer.send({ topic, acks: -1, messages: values.map((value) => ({ key: 'k', value })) });
        }
      } finally {
        await producer.disconnect();
      }

      // A producer connected while the broker is alive, with no retries: it must fail once the broker is
      // gone. Its own client, because kafkajs retries reconnects per client (~9 s with the defaults).
      const probe = new Kafka({
        clientId: 'kill-restart-probe',
        brokers: broker.brokers,
        connectionTimeout: 1000,
        retry: { retries: 0 },
        logLevel: logLevel.NOTHING,
      }).producer({ retry: { retries: 0 }, createPartitioner: Partitioners.DefaultPartitioner });
      await probe.connect();

      const pid = broker.pid;
      expect(pid).toBeTypeOf('number');
      expect(await broker.kill()).toBe(true);
      expect(isProcessAlive(pid as number)).toBe(false);
      expect(broker.isRunning()).toBe(false);

      try {
        await expect(
          probe.send({ topic, acks: -1, timeout: 2000, messages: [{ value: 'while-dead' }] }),
        ).rejects.toThrow();
      } finally {
        await probe.disconnect();
      }

      const restartedAt = Date.now();
      await broker.start();
      await broker.waitUntilReady(90_000);
      console.info(`Kafka restarted after kill -9 in ${((Date.now() - restartedAt) / 1000).toFixed(1)} s`);
      expect(broker.pid).not.toBe(pid);

      expect(await consumeAll(kafka, topic, messageCount)).toEqual(expected);
    },
    testTimeout,
  );
});

/** Reads `count` values from the start of the topic with a fresh consumer group. */
async function consumeAll(kafka: Kafka, topic: string, count: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `kill-restart-${Date.now()}-${process.pid}` });
  const received: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Only ${received.length}/${count} messages arrived within 60 s.`)),
        60_000,
      );
      consumer
        .run({
          eachMessage: async ({ message }) => {
            received.push(message.value?.toString() ?? '<null>');
            if (received.length >= count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return received;
}
