// A dead letter stands in for the message it replaces, so the consumer moves past a message only
// once its dead letter is in the log (consumers.dead-letter-in-the-log-before-moving-past-it has
// the send fail outright). Here the send is acknowledged while it crosses a partition leader's
// kill -9 on a three-broker cluster (replication factor 3, min.insync.replicas 2), the case where a
// client may resolve a send whose messages were never written (docs/dependencies.md): every poison
// message the group committed past must have its dead letter in the log. Each client in turn.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { startTestCluster, type TestCluster } from '@outbox/devstack/testing/test-broker';
import { type ChunkItem, type RunningConsumer, runConsumer } from '@outbox/inbox';
import { createKafkaClient, type KafkaClientName } from '@outbox/runtime/kafka';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { groupCaughtUp, header, readMessages, testKafka } from './support.ts';

useLeakGuard();

const POISON = 300;
const KILL_AFTER = 100;

let testCluster: TestCluster;
let running: RunningConsumer | undefined;

beforeAll(async () => {
  testCluster = await startTestCluster('dead-letters-leader-kill');
}, 330_000);

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

afterAll(async () => {
  await testCluster?.dispose();
});

describe.each<KafkaClientName>(['kafkajs', 'platformatic'])('a consumer on %s', (client) => {
  it('has in the log the dead letter of every poison message it moved past, through a kill -9 of the dead-letter partition’s leader', {
    timeout: 300_000,
  }, async () => {
    const { cluster } = testCluster;
    const kafka = testKafka(cluster.brokers);
    const prefix = `dlt-kill-${randomBytes(3).toString('hex')}.`;
    const topic = `${prefix}order.events`;
    const deadLetters = `${topic}.dlt`;
    const groupId = `${prefix}consumer`;
    running = await runConsumer({
      client: createKafkaClient({
        client,
        clientId: groupId,
        brokers: cluster.brokers,
        logger: pino({ level: 'silent' }),
      }),
      groupId,
      topics: [topic],
      topicLayout: { partitions: 1, replicationFactor: 3 },
      logger: pino({ level: 'silent' }),
      commitIntervalMs: 200,
      handleChunk: async (items: ChunkItem[]) => items.map(() => 'applied' as const),
    });

    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    let killed: number | undefined;
    try {
      for (let n = 0; n < POISON; n++) {
        if (n === KILL_AFTER) {
          killed = await cluster.leaderOf(deadLetters, 0);
          await cluster.node(killed).kill();
        }
        // Sent again until acknowledged: which of them are in the log is read back below.
        await eventually(`poison ${n} sent`, () =>
          producer
            .send({ topic, acks: -1, messages: [{ key: `poison-${n % 7}`, value: `not {JSON ${n}` }] })
            .then(() => true)
            .catch(() => undefined),
        );
        await sleep(10);
      }
    } finally {
      await producer.disconnect();
    }
    await eventually(
      'the group committed past every message',
      async () => ((await groupCaughtUp(kafka, groupId, [topic])) ? true : undefined),
      180_000,
    );

    const sources = await readMessages(kafka, topic, 60_000);
    const letters = await readMessages(kafka, deadLetters, 60_000);
    const lettered = new Set(letters.map((letter) => header(letter, 'dlt_offset')));
    const missing = sources
      .map((message) => String(message.offset))
      .filter((offset) => !lettered.has(offset));
    console.log(
      `${client}: leader of ${deadLetters}[0] (node ${killed}) killed after ${KILL_AFTER} of ${POISON} poison messages; ` +
        `${sources.length} in the log, ${letters.length} dead letters, ${missing.length} moved past without one`,
    );
    expect(sources.length).toBeGreaterThanOrEqual(POISON);
    expect(missing).toEqual([]);

    if (killed !== undefined) {
      await cluster.node(killed).start();
      await cluster.waitUntilReady(180_000);
    }
  });
});
