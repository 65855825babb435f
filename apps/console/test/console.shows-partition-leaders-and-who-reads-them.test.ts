// GET /api/kafka, what the console's Kafka panel draws: the brokers, each partition of the event
// topics with its leader and in-sync replicas, and each consumer group reading them with the
// partitions each instance holds, and the rebalances the console saw. Against the real test broker
// and real kafkajs consumers in a group of the test's own; no system behind the console otherwise.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { topicFor } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { ensureTopics } from '@outbox/runtime/kafka';
import { createKafka, KafkajsAdmin } from '@outbox/runtime/kafka/kafkajs';
import { createLogger } from '@outbox/runtime/logger';
import type { Consumer } from 'kafkajs';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../src/console.ts';
import type { KafkaTopology } from '../src/shared/apiTypes.ts';
import { bareConsoleConfig } from './bareConsole.ts';

useLeakGuard();

const prefix = `console-kafka-${randomUUID().slice(0, 8)}.`;
const topic = topicFor('order', prefix);
const groupId = `${prefix}inventory`;
const kafka = createKafka({
  clientId: 'console-kafka-test',
  brokers: sharedKafkaBrokers(),
  logger: pino({ level: 'silent' }),
});
const consumers: Consumer[] = [];
let console_: RunningConsole;

async function joinGroup(): Promise<void> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 500 });
  consumers.push(consumer);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async () => {} });
}

async function topology(): Promise<KafkaTopology> {
  return (await fetch(`${console_.url}/api/kafka`)).json() as Promise<KafkaTopology>;
}

/** Read the topology until `ok` holds for it; the group's join and rebalance take a few seconds. */
async function topologyWhere(ok: (t: KafkaTopology) => boolean, timeoutMs = 60_000): Promise<KafkaTopology> {
  let last: KafkaTopology | undefined;
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(250)) {
    last = await topology();
    if (ok(last)) return last;
  }
  throw new Error(`the topology never got there; last: ${JSON.stringify(last)}`);
}

const ourGroup = (t: KafkaTopology) => t.groups.find((group) => group.groupId === groupId);

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(new KafkajsAdmin(admin), [topic], { partitions: 4 });
  await admin.disconnect();
  console_ = await startConsole({
    config: await bareConsoleConfig(prefix),
    logger: createLogger('console', 'silent'),
  });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(consumers.map((consumer) => consumer.disconnect()));
  await console_?.close();
});

describe("the console's Kafka panel", () => {
  it('lists the broker and every partition of the event topics with its leader and in-sync replicas', async () => {
    const t = await topologyWhere((t) => t.partitions.length === 4);
    expect(t.error).toBeUndefined();
    expect(t.brokers).toHaveLength(1);
    const [broker] = t.brokers;
    expect(t.partitions.map((p) => `${p.topic}/${p.partition}`)).toEqual(
      [0, 1, 2, 3].map((n) => `${topic}/${n}`),
    );
    for (const p of t.partitions) {
      expect(p.leader).toBe(broker?.nodeId);
      expect(p.isr).toEqual([broker?.nodeId]);
    }
  });

  it('shows which instance of a group holds which partitions, and the rebalance when a second joins', async () => {
    await joinGroup();
    const alone = await topologyWhere(
      (t) => ourGroup(t)?.members.length === 1 && ourGroup(t)?.state === 'Stable',
    );
    expect(ourGroup(alone)?.members[0]?.partitions).toEqual([0, 1, 2, 3].map((n) => `${topic}/${n}`));

    await joinGroup();
    const shared = await topologyWhere(
      (t) =>
        ourGroup(t)?.state === 'Stable' &&
        ourGroup(t)?.members.length === 2 &&
        (ourGroup(t)?.members.every((member) => member.partitions.length === 2) ?? false),
    );
    const group = ourGroup(shared);
    expect(new Set(group?.members.map((member) => member.memberId)).size).toBe(2);
    expect(group?.members.flatMap((member) => member.partitions).sort()).toEqual(
      [0, 1, 2, 3].map((n) => `${topic}/${n}`),
    );
    expect(group?.rebalancesSeen).toBeGreaterThanOrEqual(1);
    expect(group?.lastRebalanceAt).toBeDefined();
  });
});
