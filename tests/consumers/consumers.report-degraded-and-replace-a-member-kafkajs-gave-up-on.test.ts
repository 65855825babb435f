// kafkajs restarts a crashed consumer only when the crash is retriable; after any other crash the
// member stays stopped for ever, and a process whose /healthz read only "started" would say ok
// while it consumes nothing. Here the member's join is refused for good: another member of the
// same group (another deployment, say) speaks only an assignor this one does not know
// (INCONSISTENT_GROUP_PROTOCOL, not retriable). The consumer must say it is degraded and why, keep
// trying with new members, and consume again once the group accepts it.
import { randomBytes } from 'node:crypto';
import { ORDER_CREATED } from '@outbox/contracts';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { type EventConsumer, startEventConsumer } from '@outbox/inbox';
import { transactionOn } from '@outbox/runtime/database';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { AssignerProtocol, type Consumer, type Kafka, type PartitionAssigner } from 'kafkajs';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderTopics, orderCreated, produce, testKafka, useEffectsDatabase } from './support.ts';

// No leak guard here: a member kafkajs gave up on is disconnected within a bound when it is replaced
// and, past the bound, left behind inert (groupMember.ts). Beside other test files one such member's
// connection to the broker outlived the consumer's stop; run alone, none does.

const pool = useEffectsDatabase('member-given-up');
let kafka: Kafka;
beforeAll(() => {
  kafka = testKafka(sharedKafkaBrokers());
});
let consumer: EventConsumer | undefined;
let intruder: Consumer | undefined;
afterAll(async () => {
  await intruder?.disconnect();
  await consumer?.stop();
});

/** An assignor no other member speaks: the group accepts only members that offer it too. */
const lonelyAssigner: PartitionAssigner = () => ({
  name: 'LonelyAssigner',
  version: 1,
  assign: async ({ members }) =>
    members.map(({ memberId }) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 1,
        assignment: {},
        userData: Buffer.alloc(0),
      }),
    })),
  protocol: ({ topics }) => ({
    name: 'LonelyAssigner',
    metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
  }),
});

const effectCount = async () =>
  (await pool().query<{ n: number }>('select count(*)::int as n from effects')).rows[0]?.n ?? 0;

describe('a group member kafkajs gave up on', () => {
  it('makes the consumer degraded with the reason, and is replaced until one joins', {
    timeout: 180_000,
  }, async () => {
    const prefix = `member-given-up-${randomBytes(4).toString('hex')}.`;
    const topic = await createOrderTopics(kafka, prefix);
    const groupId = `${prefix}consumer`;

    intruder = kafka.consumer({ groupId, partitionAssigners: [lonelyAssigner] });
    const joined = new Promise<void>((resolve) => intruder?.on(intruder.events.GROUP_JOIN, () => resolve()));
    await intruder.connect();
    await intruder.subscribe({ topics: [topic] });
    await intruder.run({ eachMessage: async () => {} });
    await joined;

    consumer = startEventConsumer<pg.PoolClient>({
      source: '/member-given-up-test',
      groupId,
      kafka: { brokers: sharedKafkaBrokers(), topicPrefix: prefix, topicLayout: { partitions: 1 } },
      aggregateTypes: ['order'],
      transaction: transactionOn(pool()),
      handlers: {
        [ORDER_CREATED]: async (tx, { id }) => {
          await tx.query('insert into effects (event_id) values ($1)', [id]);
          return 'STORED';
        },
      },
      logger: pino({ level: 'silent' }),
      registry: createMetricsRegistry('member-given-up-test'),
    });
    const running = consumer;

    // Started, its member crashed on the join, and kafkajs does not restart it.
    const degraded = await eventually(
      'the consumer reports its member not running',
      async () => {
        const health = running.health();
        return health.status === 'degraded' && health.lastError?.includes('incompatible')
          ? health
          : undefined;
      },
      60_000,
    );
    expect(degraded.lastError).toMatch(/not running.*kafkajs does not restart it/);

    // The cause outlives each new member: still degraded, not ok, a few replacements later.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(running.health()).toMatchObject({ status: 'degraded' });

    await intruder.disconnect();
    intruder = undefined;
    await produce(kafka, topic, [orderCreated('after-the-intruder-left')]);
    await eventually(
      'a new member joined and applied the event',
      async () => ((await effectCount()) === 1 && running.health().status === 'ok' ? true : undefined),
      90_000,
    );
    expect(running.health()).toMatchObject({ status: 'ok', applied: 1 });
  });
});
