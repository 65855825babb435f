import { randomUUID } from 'node:crypto';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import {
  createKafkaClient,
  ensureTopics,
  type KafkaClient,
  type KafkaClientName,
  type PartitionedMessages,
  partitionOf,
  UnacknowledgedPartitionsError,
} from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The seam's ports (packages/runtime/src/kafka/ports.ts) say what the services ask of a Kafka
// client; each adapter must keep them against a real broker. kafkajs is the observer here: it
// reads what was written (readTopic) and sets a group's offsets, independently of the adapter.

const logger = pino({ level: 'silent' });
const PARTITIONS = 4;

describe.each<KafkaClientName>(['kafkajs', 'platformatic'])('the %s adapter', (name) => {
  const brokers = sharedKafkaBrokers();
  const topic = `contract-${name}-${randomUUID().slice(0, 8)}`;
  let client: KafkaClient;
  const observerKafka = createKafka({ clientId: `contract-observer-${name}`, brokers, logger });
  const observer = observerKafka.admin();

  beforeAll(async () => {
    client = createKafkaClient({ client: name, clientId: `contract-${name}`, brokers, logger });
    await observer.connect();
  });

  afterAll(async () => {
    await observer.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await observer.disconnect();
  });

  it('is the client asked for', () => {
    expect(client.name).toBe(name);
  });

  it('creates a missing topic with the layout asked for, and leaves an existing one alone', async () => {
    const admin = client.admin();
    await admin.connect();
    try {
      await ensureTopics(admin, [topic], { partitions: PARTITIONS });
      await ensureTopics(admin, [topic], { partitions: 1 });
      // A topic another process created meanwhile is no error either.
      await admin.createTopics([{ topic, partitions: 1, replicationFactor: 1, configs: {} }]);
      expect(await admin.listTopics()).toContain(topic);
      expect(await admin.partitionCounts([topic])).toEqual(new Map([[topic, PARTITIONS]]));
      const { resources } = await observer.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2 /* TOPIC */, name: topic }],
      });
      const config = Object.fromEntries(
        (resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]),
      );
      expect(config['unclean.leader.election.enable']).toBe('false');
    } finally {
      await admin.disconnect();
    }
  });

  it('acknowledges a batch only once every message is in the log, on the partition it was given', async () => {
    const producer = client.producer();
    const keys = Array.from({ length: 200 }, (_, i) => `order-${i % 37}`);
    const ids = keys.map(() => randomUUID());
    const batch: PartitionedMessages = {
      topic,
      messages: keys.map((key, i) => ({
        key,
        value: JSON.stringify({ n: i }),
        headers: { ce_id: ids[i], 'content-type': 'application/json' },
        partition: partitionOf(key, PARTITIONS),
      })),
    };
    try {
      const acks = await producer.send([batch]);
      const written = new Set(batch.messages.map((message) => message.partition));
      expect(new Set(acks.map((ack) => ack.partition))).toEqual(written);
    } finally {
      await producer.disconnect();
    }
    const read = await readTopic(brokers, topic);
    expect(read.map((message) => message.eventId).sort()).toEqual([...ids].sort());
    for (const message of read)
      expect(message.partition).toBe(partitionOf(message.key as string, PARTITIONS));
  });

  it('refuses a batch for a partition the topic does not have, naming it', async () => {
    const producer = client.producer();
    try {
      const error = await producer
        .send([{ topic, messages: [{ key: 'a', value: 'x', partition: PARTITIONS + 5 }] }])
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Error);
      if (error instanceof UnacknowledgedPartitionsError)
        expect(error.partitions).toEqual([`${topic}[${PARTITIONS + 5}]`]);
    } finally {
      await producer.disconnect();
    }
  });

  it('reads each partition’s offsets and a group’s committed offsets', async () => {
    const admin = client.admin();
    const groupId = `contract-group-${randomUUID().slice(0, 8)}`;
    await admin.connect();
    try {
      const expected = await observer.fetchTopicOffsets(topic);
      const offsets = await admin.topicOffsets(topic);
      expect(offsets.sort((a, b) => a.partition - b.partition)).toEqual(
        expected
          .map(({ partition, low, high }) => ({ partition, low, high }))
          .sort((a, b) => a.partition - b.partition),
      );
      const never = await admin.committedOffsets(groupId, [topic]);
      expect(never).toEqual([
        {
          topic,
          partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, offset: '-1' })),
        },
      ]);
      await observer.setOffsets({ groupId, topic, partitions: [{ partition: 1, offset: '3' }] });
      const [committed] = await admin.committedOffsets(groupId, [topic]);
      expect(committed?.partitions.find((p) => p.partition === 1)?.offset).toBe('3');
      expect(committed?.partitions.find((p) => p.partition === 0)?.offset).toBe('-1');
    } finally {
      await admin.disconnect();
    }
  });

  it('sends through a producer that is not idempotent (the naive write modes) with the same answer check', async () => {
    const producer = client.producer({ idempotent: false });
    const id = randomUUID();
    try {
      const acks = await producer.send([
        { topic, messages: [{ key: 'naive', value: '{}', headers: { ce_id: id }, partition: 2 }] },
      ]);
      expect(acks.map((ack) => ack.partition)).toEqual([2]);
      const error = await producer
        .send([{ topic, messages: [{ key: 'a', value: 'x', partition: PARTITIONS + 5 }] }])
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Error);
    } finally {
      await producer.disconnect();
    }
    const read = await readTopic(brokers, topic);
    expect(read.filter((message) => message.eventId === id).map((message) => message.partition)).toEqual([2]);
  });

  it('describes the brokers, each partition’s leader and replicas, and the groups reading the topic', async () => {
    const admin = client.admin();
    const groupId = `contract-readers-${randomUUID().slice(0, 8)}`;
    const reader = observerKafka.consumer({ groupId, allowAutoTopicCreation: false });
    const joined = new Promise<void>((resolve) => reader.on(reader.events.GROUP_JOIN, () => resolve()));
    await admin.connect();
    try {
      const cluster = await observer.describeCluster();
      expect(await admin.describeCluster()).toEqual({
        brokers: cluster.brokers.map(({ nodeId, host, port }) => ({ nodeId, host, port })),
        controller: cluster.controller,
      });
      const { topics } = await observer.fetchTopicMetadata({ topics: [topic] });
      const leadership = await admin.partitionLeadership([topic]);
      expect(leadership.sort((a, b) => a.partition - b.partition)).toEqual(
        (topics[0]?.partitions ?? [])
          .map(({ partitionId, leader, replicas, isr }) => ({
            topic,
            partition: partitionId,
            leader,
            replicas,
            isr,
          }))
          .sort((a, b) => a.partition - b.partition),
      );
      expect(await admin.partitionLeadership([])).toEqual([]);

      await reader.connect();
      await reader.subscribe({ topics: [topic] });
      await reader.run({ eachMessage: async () => {} });
      await joined;
      const group = (await admin.consumerGroups()).find((g) => g.groupId === groupId);
      expect(group?.state).toBe('Stable');
      expect(group?.members).toHaveLength(1);
      expect(group?.members[0]?.clientId).toBe(`contract-observer-${name}`);
      expect([...(group?.members[0]?.assignment[topic] ?? [])].sort()).toEqual(
        Array.from({ length: PARTITIONS }, (_, partition) => partition),
      );
    } finally {
      await reader.disconnect();
      await admin.disconnect();
    }
  });
});
