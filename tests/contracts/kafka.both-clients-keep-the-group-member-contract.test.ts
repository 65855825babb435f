import { randomUUID } from 'node:crypto';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import {
  createKafkaClient,
  type GroupMember,
  type KafkaClient,
  type KafkaClientName,
  type KafkaGroupProtocol,
  type PartitionBatch,
  partitionOf,
} from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import { Admin } from '@platformatic/kafka';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// The group member port (packages/runtime/src/kafka/ports.ts) is what the consumer loop stands on:
// batches of one partition in offset order, offsets committed only as resolved, the committed
// offsets read again by whoever holds a partition next. Each adapter must keep it against a real
// broker, through members joining and leaving, and @platformatic/kafka's on both group protocols
// (KAFKA_GROUP_PROTOCOL); kafkajs's admin observes the committed offsets, and @platformatic/kafka's
// the group's type (kafkajs's ListGroups predates group types).

const logger = pino({ level: 'silent' });

/** Wait until `check` holds. */
const until = (description: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) =>
  eventually(description, async () => ((await check()) ? true : undefined), timeoutMs);
const PARTITIONS = 4;
const KEYS = 40;

/** What the members under test applied: per partition, the offsets in the order they were applied. */
class Applied {
  readonly byPartition = new Map<number, number[]>();
  count = 0;

  add(partition: number, offset: string): void {
    const list = this.byPartition.get(partition) ?? [];
    list.push(Number(offset));
    this.byPartition.set(partition, list);
    this.count += 1;
  }

  /** Every offset below each partition's end applied at least once. */
  covers(ends: Map<number, number>): boolean {
    for (const [partition, end] of ends) {
      const seen = new Set(this.byPartition.get(partition) ?? []);
      for (let offset = 0; offset < end; offset++) if (!seen.has(offset)) return false;
    }
    return true;
  }

  /**
   * Offsets applied for the first time came in increasing order on every partition: a redelivery
   * repeats offsets already applied (a duplicate, skipped by the inbox), it never applies an older
   * event after a newer one for the first time.
   */
  firstTimesInOrder(): boolean {
    for (const offsets of this.byPartition.values()) {
      const seen = new Set<number>();
      let last = -1;
      for (const offset of offsets) {
        if (seen.has(offset)) continue;
        if (offset < last) return false;
        seen.add(offset);
        last = offset;
      }
    }
    return true;
  }
}

describe.each<[KafkaClientName, KafkaGroupProtocol]>([
  ['kafkajs', 'classic'],
  ['platformatic', 'classic'],
  ['platformatic', 'consumer'],
])('the %s group member on the %s protocol', (clientName, groupProtocol) => {
  const name = groupProtocol === 'classic' ? clientName : `${clientName}-${groupProtocol}`;
  const brokers = sharedKafkaBrokers();
  const observer = createKafka({ clientId: `member-observer-${name}`, brokers, logger }).admin();
  let client: KafkaClient;
  let topic: string;
  let groupId: string;
  let members: GroupMember[] = [];

  beforeAll(async () => {
    client = createKafkaClient({
      client: clientName,
      groupProtocol,
      clientId: `member-${name}`,
      brokers,
      logger,
    });
    await observer.connect();
  });
  afterEach(async () => {
    for (const member of members) await leave(member);
    members = [];
    await observer.deleteTopics({ topics: [topic] }).catch(() => undefined);
  });
  afterAll(() => observer.disconnect());

  /** A fresh topic with `count` messages spread over its partitions by key; answers each partition's end. */
  async function topicWith(count: number): Promise<Map<number, number>> {
    topic = `member-${name}-${randomUUID().slice(0, 8)}`;
    groupId = `${topic}-group`;
    await observer.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: PARTITIONS }] });
    // Not waitForLeaders: on a loaded machine the broker may not know the new topic yet when
    // kafkajs asks, which it takes for an error. Its offsets answer once every partition has a leader.
    await until('the topic ready', async () => {
      const offsets = await observer.fetchTopicOffsets(topic).catch(() => []);
      return offsets.length === PARTITIONS;
    });
    await produce(count);
    return ends();
  }

  async function produce(count: number, from = 0): Promise<void> {
    const producer = client.producer();
    try {
      const messages = Array.from({ length: count }, (_, i) => {
        const key = `key-${(from + i) % KEYS}`;
        return { key, value: `event-${from + i}`, partition: partitionOf(key, PARTITIONS) };
      });
      await producer.send([{ topic, messages }]);
    } finally {
      await producer.disconnect();
    }
  }

  async function ends(): Promise<Map<number, number>> {
    const offsets = await observer.fetchTopicOffsets(topic);
    return new Map(offsets.map(({ partition, high }) => [partition, Number(high)]));
  }

  /** The group's protocol as the broker lists it: `classic` or `consumer`. */
  async function groupType(): Promise<string | undefined> {
    const admin = new Admin({ clientId: `member-observer-${name}-types`, bootstrapBrokers: brokers });
    try {
      const groups = await admin.listGroups({ types: ['classic', 'consumer'] });
      return groups.get(groupId)?.groupType;
    } finally {
      await admin.close();
    }
  }

  async function committed(): Promise<Map<number, number>> {
    const [offsets] = await observer.fetchOffsets({ groupId, topics: [topic] });
    return new Map((offsets?.partitions ?? []).map(({ partition, offset }) => [partition, Number(offset)]));
  }

  /** A member that applies each message (after `delayMs`), resolves it, and commits every batch's offsets. */
  async function join(applied: Applied, delayMs = 0): Promise<GroupMember> {
    const member = await client.groupMember({
      groupId,
      topics: [topic],
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 1_000,
      partitionsConsumedConcurrently: 2,
      onReplaced: () => {},
      logger,
      eachBatch: async (batch: PartitionBatch) => {
        for (const message of batch.batch.messages) {
          if (!batch.isRunning() || batch.isStale()) return;
          if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
          applied.add(batch.batch.partition, message.offset);
          batch.resolveOffset(message.offset);
        }
        await batch.commitOffsetsIfNecessary(batch.uncommittedOffsets());
      },
    });
    members.push(member);
    return member;
  }

  async function leave(member: GroupMember): Promise<void> {
    members = members.filter((m) => m !== member);
    await member.stopWatching();
    await member.leave();
  }

  it('hands over every message, each partition in offset order, and commits what was resolved', async () => {
    const end = await topicWith(400);
    const applied = new Applied();
    await join(applied);
    await until('every message applied', () => applied.covers(end), 60_000);
    expect(applied.firstTimesInOrder()).toBe(true);
    expect(await groupType(), 'the group protocol the broker runs the group on').toBe(groupProtocol);
    await until(
      'the offsets committed up to the end',
      async () => sameOffsets(await committed(), end),
      30_000,
    );
  });

  it('starts a partition where the group committed it, not at the beginning', async () => {
    const end = await topicWith(200);
    const first = new Applied();
    const member = await join(first);
    await until('the first member done', async () => sameOffsets(await committed(), end));
    await leave(member);

    await produce(100, 200);
    const later = await ends();
    const second = new Applied();
    await join(second);
    await until('the new messages applied', () => newOnes(second, end, later));
    for (const [partition, offsets] of second.byPartition)
      expect(Math.min(...offsets), `partition ${partition} read again from the start`).toBeGreaterThanOrEqual(
        end.get(partition) ?? 0,
      );
  });

  it('through a member joining and leaving while batches wait, loses no message and applies none out of order', {
    timeout: 150_000,
  }, async () => {
    const end = await topicWith(600);
    const applied = new Applied();
    // Slow enough that messages are fetched and waiting when the partitions move.
    await join(applied, 5);
    await until('the first member applying', () => applied.count >= 50);
    const second = await join(applied, 5);
    await until('the second member applying', () => applied.count >= 250);
    // Its partitions go back to the first member, which fetched some of them before.
    await leave(second);
    await until('every message applied', () => applied.covers(end), 90_000);
    expect(applied.firstTimesInOrder()).toBe(true);
    await until(
      'the offsets committed up to the end',
      async () => sameOffsets(await committed(), end),
      30_000,
    );
  });

  it('through its partitions moved away and back while a fetch waits on the broker, loses no message', {
    timeout: 150_000,
  }, async () => {
    // A fetch sent before two quick rebalances may answer after them: its messages must not move
    // the member's position past what the member, holding the partitions again, has to read.
    const first = await topicWith(40);
    const applied = new Applied();
    await join(applied);
    await until('the first messages applied', () => applied.covers(first));
    // Idle now: the member's fetches wait on the broker for new messages (a long poll).
    let written = 40;
    const writing = (async () => {
      for (let round = 0; round < 30; round++) {
        await produce(10, written);
        written += 10;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    // Away to a second member and straight back: two rebalances within one long poll.
    const second = await join(applied);
    await leave(second);
    await writing;
    const end = await ends();
    await until('every message applied', () => applied.covers(end), 60_000).catch(async (err: unknown) => {
      // Which offsets never came, and whether the group committed past them (a loss, not a stall).
      const missing = [...end].map(([partition, high]) => {
        const seen = new Set(applied.byPartition.get(partition) ?? []);
        const gaps = Array.from({ length: high }, (_, offset) => offset).filter(
          (offset) => !seen.has(offset),
        );
        return `${partition}: [${gaps.join(',')}] of ${high}`;
      });
      console.log(`missing ${missing.join('; ')}; committed ${JSON.stringify([...(await committed())])}`);
      throw err;
    });
    expect(applied.firstTimesInOrder()).toBe(true);
    await until(
      'the offsets committed up to the end',
      async () => sameOffsets(await committed(), end),
      30_000,
    );
  });
});

function sameOffsets(a: Map<number, number>, b: Map<number, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [partition, offset] of b) if (a.get(partition) !== offset) return false;
  return true;
}

/** Every offset from `from` up to `to` applied, on every partition. */
function newOnes(applied: Applied, from: Map<number, number>, to: Map<number, number>): boolean {
  for (const [partition, end] of to) {
    const seen = new Set(applied.byPartition.get(partition) ?? []);
    for (let offset = from.get(partition) ?? 0; offset < end; offset++) if (!seen.has(offset)) return false;
  }
  return true;
}
