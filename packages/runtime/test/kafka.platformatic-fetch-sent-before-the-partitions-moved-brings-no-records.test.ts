import { randomUUID } from 'node:crypto';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { Admin, Producer } from '@platformatic/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedConsumer } from '../src/kafka/platformatic/fencedConsumer.ts';

// The platformatic group member's stream moves a partition's position to the end of whatever a
// fetch brings back. A fetch sent before the member's partitions moved, answered after, would move
// it past messages the member dropped with the partition: the member's consumer drops such an
// answer's records. Here a real long poll waits on an empty partition of the real broker while the
// partitions change, and a message written then wakes it.

const brokers = sharedKafkaBrokers();
const topic = `fenced-fetch-${randomUUID().slice(0, 8)}`;
const admin = new Admin({ clientId: 'fenced-fetch-admin', bootstrapBrokers: brokers });
const producer = new Producer({ clientId: 'fenced-fetch-producer', bootstrapBrokers: brokers });
let consumer: FencedConsumer;

beforeAll(async () => {
  await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  consumer = new FencedConsumer({
    clientId: 'fenced-fetch',
    groupId: `${topic}-group`,
    bootstrapBrokers: brokers,
  });
});

afterAll(async () => {
  await consumer.close(true);
  await producer.close();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.close();
});

/**
 * The offsets a fetch from `fetchOffset` brings back; with `wake`, the fetch waits on the broker
 * (nothing at that offset yet) until `meanwhile` has run and a message written after wakes it.
 */
async function fetchFrom(fetchOffset: bigint, meanwhile = () => {}, wake = true): Promise<bigint[]> {
  const metadata = await consumer.metadata({ topics: [topic] });
  const { id: topicId, partitions } = metadata.topics.get(topic) ?? { id: '', partitions: [] };
  const fetching = consumer.fetch({
    node: partitions[0]?.leader ?? -1,
    topics: [
      {
        topicId,
        partitions: [
          {
            partition: 0,
            fetchOffset,
            partitionMaxBytes: 1 << 20,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
          },
        ],
      },
    ],
    // Long enough that only the message written below answers it.
    maxWaitTime: 20_000,
    minBytes: 1,
  });
  meanwhile();
  if (wake)
    await producer.send({ messages: [{ topic, partition: 0, value: Buffer.from(`at ${fetchOffset}`) }] });
  const response = await fetching;
  return response.responses.flatMap(({ partitions }) =>
    partitions.flatMap(({ records }) =>
      (records ?? []).flatMap((batch) => batch.records.map((r) => batch.firstOffset + BigInt(r.offsetDelta))),
    ),
  );
}

describe('the platformatic member’s consumer', () => {
  it('keeps the records of a fetch answered under the assignment it was sent under', {
    timeout: 60_000,
  }, async () => {
    expect(await fetchFrom(0n)).toEqual([0n]);
  });

  it('drops the records of a fetch sent before its partitions moved', { timeout: 60_000 }, async () => {
    expect(await fetchFrom(1n, () => consumer.assignmentChanged())).toEqual([]);
    // The message was written: the next fetch, sent under the new assignment, brings it.
    expect(await fetchFrom(1n, undefined, false)).toEqual([1n]);
  });

  it('answers a fetch built with no position for a partition with nothing, without asking the broker', async () => {
    const metadata = await consumer.metadata({ topics: [topic] });
    const { id: topicId, partitions } = metadata.topics.get(topic) ?? { id: '', partitions: [] };
    const partition = {
      partition: 0,
      partitionMaxBytes: 1 << 20,
      currentLeaderEpoch: -1,
      lastFetchedEpoch: -1,
    };
    // The stream's request when it read its positions after they were forgotten: no fetchOffset.
    const response = await consumer.fetch({
      node: partitions[0]?.leader ?? -1,
      topics: [{ topicId, partitions: [partition as typeof partition & { fetchOffset: bigint }] }],
      maxWaitTime: 20_000,
      minBytes: 1,
    });
    expect(response.responses).toEqual([]);
  });
});
