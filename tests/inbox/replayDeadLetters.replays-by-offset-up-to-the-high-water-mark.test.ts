// The dead-letter replay works by offset, per partition, up to the high-water mark it read at the
// start: letters dead-lettered while it runs are left for the next run (never skipped), and a
// dead-letter topic whose first letters retention deleted is replayed from its log start (the
// replay finishes instead of waiting for letters that no longer exist).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { replayDeadLetters } from '@outbox/inbox';
import { fixKafkajsIdleTimerLoop, kafkajsClient } from '@outbox/runtime/kafka/kafkajs';
import { type Admin, Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

let kafka: Kafka;
let admin: Admin;
let producer: Producer;
let letters = 0;

beforeAll(async () => {
  fixKafkajsIdleTimerLoop();
  kafka = new Kafka({
    clientId: 'dlt-replay-test',
    brokers: sharedKafkaBrokers(),
    logLevel: logLevel.NOTHING,
  });
  admin = kafka.admin();
  producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
  // The broker of this run has just started: wait until its group coordinator answers.
  for (let tries = 0; ; tries++) {
    try {
      await admin.fetchOffsets({ groupId: 'dlt-replay-warm-up', topics: [] });
      break;
    } catch (err) {
      if (tries > 60) throw err;
      await sleep(500);
    }
  }
});

afterAll(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
});

/** A topic and its dead-letter topic, both new. */
async function topics(dltPartitions: number) {
  const topic = `dlt-replay-${randomBytes(3).toString('hex')}`;
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic, numPartitions: 1 },
      { topic: `${topic}.dlt`, numPartitions: dltPartitions },
    ],
  });
  await admin.fetchTopicMetadata({ topics: [topic, `${topic}.dlt`] }); // leaders known to the admin
  return { topic, dlt: `${topic}.dlt` };
}

/** `count` letters on one partition of the dead-letter topic, each from a distinct original offset. */
async function deadLetter(topic: string, partition: number, count: number): Promise<void> {
  const messages = Array.from({ length: count }, () => {
    letters += 1;
    return {
      partition,
      key: `order-${letters}`,
      value: JSON.stringify({ letter: letters }),
      headers: { dlt_topic: topic, dlt_partition: '0', dlt_offset: String(letters), dlt_reason: 'test' },
    };
  });
  await producer.send({ topic: `${topic}.dlt`, acks: -1, messages });
}

const highWaterMark = async (topic: string) =>
  (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);

/** Fails the test instead of hanging it when the replay never ends. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the replay did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

describe('replaying a dead-letter topic', () => {
  it('leaves the letters dead-lettered during a replay for the next replay', {
    timeout: 120_000,
  }, async () => {
    const { topic, dlt } = await topics(2);
    // Partition 0 takes a while to replay (one acknowledged send per letter); partition 1 is
    // replayed early, and more letters reach both while partition 0 is still going.
    await deadLetter(topic, 0, 200);
    await deadLetter(topic, 1, 1);
    const group = `${topic}.replay`;
    let replaying = true;
    const replay = replayDeadLetters(kafkajsClient(kafka), dlt, group).finally(() => {
      replaying = false;
    });
    replay.catch(() => {}); // awaited below; a failure must not count as unhandled meanwhile
    while (replaying && (await highWaterMark(topic)) === 0) await sleep(20); // the replay has begun
    await deadLetter(topic, 1, 3);
    await deadLetter(topic, 0, 3);
    const first = await within(90_000, replay);
    // The next run replays exactly the six that came during the first: none was skipped.
    const second = await within(60_000, replayDeadLetters(kafkajsClient(kafka), dlt, group));
    expect([first.replayed, second.replayed]).toEqual([201, 6]);
    expect(await highWaterMark(topic)).toBe(207);

    // What each run says it replayed and left.
    expect(first).toMatchObject({ byTopic: { [topic]: 201 }, complete: true });
    expect(first.partitions).toEqual([
      { partition: 0, from: 0, upTo: 200, reached: 200, left: 3 },
      { partition: 1, from: 0, upTo: 1, reached: 1, left: 3 },
    ]);
    expect(second).toMatchObject({ complete: true });
    expect(second.partitions.map((p) => p.left)).toEqual([0, 0]);
  });

  it('starts at the log start when retention deleted the first letters, and finishes', {
    timeout: 120_000,
  }, async () => {
    const { topic, dlt } = await topics(1);
    await deadLetter(topic, 0, 5);
    // Retention, as the broker applies it: the log now starts at offset 3.
    await admin.deleteTopicRecords({ topic: dlt, partitions: [{ partition: 0, offset: '3' }] });

    const result = await within(60_000, replayDeadLetters(kafkajsClient(kafka), dlt, `${topic}.replay`));
    expect(result).toMatchObject({ replayed: 2, complete: true });
    expect(result.partitions).toEqual([{ partition: 0, from: 3, upTo: 5, reached: 5, left: 0 }]);
    expect(await highWaterMark(topic)).toBe(2);
  });
});
