import { randomUUID } from 'node:crypto';
import { type GroupView, observeGroups } from '@outbox/chaos';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import {
  createKafkaClient,
  type GroupMember,
  type KafkaClient,
  type PartitionBatch,
  partitionOf,
} from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// On the consumer group protocol (KIP-848) @platformatic/kafka takes partitions from a member and
// gives them back by heartbeat, with no rejoin; its stream keeps the messages it fetched, and the
// member's lanes (packages/runtime/src/kafka/platformatic/lanes.ts) queue them per partition. When
// a partition goes, `reassigned()` drops what waits for it and makes a batch of it that is still
// running stale. Without that, a partition that comes back is applied from what was queued before
// it went: messages another member applied and committed meanwhile, behind the committed offset.
// Here member A holds both partitions of a topic with its one lane busy (a batch held on a gate),
// so the other partition's messages wait queued; member B joins, takes one partition, applies it
// to the end, commits and leaves; the partition goes back to A. Then A's gate opens: whatever A
// applies of that partition from then on must start at B's commit, not before it.

const logger = pino({ level: 'silent' });
const PARTITIONS = 2;
const until = (description: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) =>
  eventually(description, async () => ((await check()) ? true : undefined), timeoutMs);

type Applied = { member: 'A' | 'B'; partition: number; offset: number; afterGate: boolean };

describe('a @platformatic/kafka member on the consumer protocol', () => {
  const brokers = sharedKafkaBrokers();
  const observer = createKafka({ clientId: 'given-back-observer', brokers, logger }).admin();
  const groups = observeGroups(brokers);
  const topic = `given-back-${randomUUID().slice(0, 8)}`;
  const groupId = `${topic}-group`;
  let client: KafkaClient;
  let members: GroupMember[] = [];

  beforeAll(async () => {
    client = createKafkaClient({
      client: 'platformatic',
      groupProtocol: 'consumer',
      clientId: 'given-back',
      brokers,
      logger,
    });
    await observer.connect();
    await observer.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: PARTITIONS }] });
    await until('the topic ready', async () => {
      const offsets = await observer.fetchTopicOffsets(topic).catch(() => []);
      return offsets.length === PARTITIONS;
    });
  });
  afterEach(async () => {
    for (const member of members) await leave(member);
  });
  afterAll(async () => {
    await observer.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await observer.disconnect();
    await groups.close();
  });

  async function produce(count: number, from: number): Promise<void> {
    const producer = client.producer();
    try {
      const messages = Array.from({ length: count }, (_, i) => {
        const key = `key-${from + i}`;
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

  async function committed(): Promise<Map<number, number>> {
    const [offsets] = await observer.fetchOffsets({ groupId, topics: [topic] });
    return new Map((offsets?.partitions ?? []).map(({ partition, offset }) => [partition, Number(offset)]));
  }

  /** A member applying one partition's batch at a time, each message unless its batch went stale. */
  async function join(
    name: Applied['member'],
    applied: Applied[],
    gate: { opened: boolean; entered: boolean; open?: Promise<void> },
  ): Promise<GroupMember> {
    const member = await client.groupMember({
      groupId,
      topics: [topic],
      heartbeatIntervalMs: 1_000,
      partitionsConsumedConcurrently: 1,
      onReplaced: () => {},
      logger,
      eachBatch: async (batch: PartitionBatch) => {
        if (!gate.opened) {
          gate.entered = true;
          await gate.open;
        }
        for (const message of batch.batch.messages) {
          if (!batch.isRunning() || batch.isStale()) return;
          const { partition } = batch.batch;
          applied.push({ member: name, partition, offset: Number(message.offset), afterGate: gate.opened });
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

  /** The group with `count` members, each holding one partition or more, and every partition held once. */
  async function settledWith(count: number): Promise<GroupView> {
    let view: GroupView = { protocol: undefined, members: [] };
    await until(`the group settled with ${count} member(s)`, async () => {
      view = await groups.describe(groupId);
      const held = view.members.flatMap((member) => member.partitions);
      return (
        view.members.length === count &&
        view.members.every((member) => member.partitions.length > 0) &&
        new Set(held).size === PARTITIONS &&
        held.length === PARTITIONS
      );
    });
    return view;
  }

  it('applies a partition given back from the group’s committed offset, never from what it queued before it went', {
    timeout: 180_000,
  }, async () => {
    await produce(200, 0);
    const applied: Applied[] = [];
    let openGate = () => {};
    const gateA = {
      opened: false,
      entered: false,
      open: new Promise<void>((resolve) => {
        openGate = resolve;
      }),
    };
    await join('A', applied, gateA);
    // A's one lane waits on the gate with its first batch; the rest of what it fetched waits queued.
    await until('A holding its first batch', () => gateA.entered);
    const alone = await settledWith(1);
    const memberA = alone.members[0]?.memberId;

    const memberB = await join('B', applied, { opened: true, entered: false });
    const shared = await settledWith(2);
    const movedKey = shared.members.find((member) => member.memberId !== memberA)?.partitions[0];
    const moved = Number(movedKey?.split('/').pop());
    const end = (await ends()).get(moved) ?? 0;
    await until('B applied the partition it was given to its end and committed it', async () => {
      const applies = applied.filter((a) => a.member === 'B' && a.partition === moved);
      return applies.length >= end && (await committed()).get(moved) === end;
    });
    await leave(memberB);
    const back = await settledWith(1);
    expect(back.members[0]?.memberId, 'the partition went back to A').toBe(memberA);
    const committedWhenBack = (await committed()).get(moved) ?? -1;
    expect(committedWhenBack).toBe(end);

    gateA.opened = true;
    openGate();
    await produce(100, 200);
    const last = await ends();
    await until('A applied every message written after the partition came back', () =>
      [...last].every(([partition, high]) =>
        applied.some((a) => a.member === 'A' && a.partition === partition && a.offset === high - 1),
      ),
    );
    const behind = applied.filter(
      (a) => a.member === 'A' && a.afterGate && a.partition === moved && a.offset < committedWhenBack,
    );
    expect(
      behind.map((a) => a.offset),
      `offsets of partition ${moved} A applied below the committed ${committedWhenBack} after it came back`,
    ).toEqual([]);
    // Nothing lost either: every offset of both partitions applied by one member or the other.
    for (const [partition, high] of last) {
      const seen = new Set(applied.filter((a) => a.partition === partition).map((a) => a.offset));
      expect(seen.size, `partition ${partition}`).toBe(high);
    }
  });
});
