// A dead letter stands in for the message it replaces: the consumer moves past the message only
// once the dead letter is in the log. Its send goes through the project's acknowledged producer
// (every partition's ack checked, a new producer after a failure), and a send that fails leaves the
// message's offset unresolved and uncommitted, so the message comes again and is dead-lettered again.
// Here the dead-letter topic is deleted under a running consumer, then created again.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { type ChunkItem, type RunningConsumer, runConsumer } from '@outbox/inbox';
import { createKafkaClient, type KafkaClientName } from '@outbox/runtime/kafka';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createOrderTopics,
  groupCaughtUp,
  header,
  orderCreated,
  produce,
  readMessages,
  testKafka,
} from './support.ts';

useLeakGuard();

const kafka = testKafka(sharedKafkaBrokers());
let running: RunningConsumer | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** Wait until `check` holds. */
const until = (description: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) =>
  eventually(description, async () => ((await check()) ? true : undefined), timeoutMs);

/** What each client's member logs when a failed batch makes it read again from the committed offsets. */
const readsAgain: Record<KafkaClientName, string> = {
  kafkajs: '"msg":"Restarting the consumer',
  platformatic: '"msg":"the group member failed: restarting it',
};

describe.each(['kafkajs', 'platformatic'] as const)(
  'a consumer on %s whose dead-letter send fails',
  (client) => {
    it('does not move past the message until its dead letter is in the log', {
      timeout: 120_000,
    }, async () => {
      const prefix = `dlt-ack-${randomBytes(3).toString('hex')}.`;
      const topic = await createOrderTopics(kafka, prefix);
      const deadLetters = `${topic}.dlt`;
      const groupId = `${prefix}consumer`;
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
      const applied: string[] = [];
      running = await runConsumer({
        // Short retries: each failed dead-letter send fails within a second.
        client: createKafkaClient({
          client,
          clientId: groupId,
          brokers: sharedKafkaBrokers(),
          logger,
          retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
        }),
        groupId,
        topics: [topic],
        topicLayout: { partitions: 1 },
        logger,
        commitIntervalMs: 200,
        handleChunk: async (items: ChunkItem[]) =>
          items.map((item) => {
            applied.push(item.message.offset);
            return 'applied' as const;
          }),
      });
      await produce(kafka, topic, [orderCreated('before')]);
      await until('the first event applied', () => applied.includes('0'));

      const admin = kafka.admin();
      await admin.connect();
      try {
        await admin.deleteTopics({ topics: [deadLetters] });
        await until(
          'the dead-letter topic gone',
          async () => !(await admin.listTopics()).includes(deadLetters),
        );

        logLines.length = 0;
        const producer = kafka.producer();
        await producer.connect();
        await producer.send({
          topic,
          acks: -1,
          messages: [{ key: 'poison', value: 'not {JSON', headers: {} }],
        });
        await producer.disconnect();
        await produce(kafka, topic, [orderCreated('after')]);

        // Two failed sends at least (each with a new producer): the batch fails, the member is
        // restarted or replaced, and fetches the poison again from the last committed offset.
        await until(
          'two failed dead-letter sends',
          () => logLines.filter((line) => line.includes(readsAgain[client])).length >= 2,
        );
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        expect(
          Number(committed?.partitions[0]?.offset),
          'committed past the poison at offset 1',
        ).toBeLessThanOrEqual(1);
        expect(applied, 'the event behind the poison waits for its dead letter').not.toContain('2');

        await until(
          'the dead-letter topic created again',
          async () =>
            admin
              .createTopics({ waitForLeaders: true, topics: [{ topic: deadLetters, numPartitions: 1 }] })
              .then(() => true)
              .catch(() => false), // still being deleted
        );
        await until(
          'the event behind the poison applied and committed',
          async () => applied.includes('2') && (await groupCaughtUp(kafka, groupId, [topic])),
        );
      } finally {
        await admin.disconnect();
      }
      const letters = await readMessages(kafka, deadLetters);
      expect(letters.length).toBeGreaterThanOrEqual(1);
      expect(letters.map((letter) => header(letter, 'dlt_offset'))).toContain('1');
      expect(new Set(letters.map((letter) => letter.value?.toString()))).toEqual(new Set(['not {JSON']));
    });
  },
);
