import { setTimeout as sleep } from 'node:timers/promises';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { RelayMode } from './invariants/snapshot.ts';
import { type ChaosStack, DATABASES } from './stack.ts';
import { consumerLag, readTopics, systemTopics, topicEnds } from './topics.ts';

export type Quiescence = {
  reached: boolean;
  /** When it was reached (epoch ms), or when we gave up. */
  at: number;
  /** What was still outstanding at the last look (empty when reached). */
  outstanding: string[];
};

/** Which groups consume which databases' topics. */
const INPUTS = { orders: ['inventory', 'billing'], inventory: ['orders'], billing: ['orders'] } as const;

/**
 * Wait until the system has nothing left to do: no order PENDING (unless told that PENDING orders
 * may be stuck for good, as a naive write mode leaves them), no outbox row pending or in
 * flight (failed ones are the dead-letter invariant's business), and every consumer group has
 * committed up to the end of its topics. Gives up at the deadline and says what was left.
 * In debezium mode rows are never marked: an outbox row is done once its event is on its topic.
 */
export async function waitForQuiescence(
  stack: ChaosStack,
  kafkaBrokers: string[],
  timeoutMs: number,
  {
    pendingOrdersAreWork = true,
    relayMode = 'polling',
  }: { pendingOrdersAreWork?: boolean; relayMode?: RelayMode } = {},
): Promise<Quiescence> {
  const deadline = Date.now() + timeoutMs;
  const topics = systemTopics(stack.topicPrefix).events;
  let outstanding: string[] = [];
  // Without the PENDING orders to go by, a reply written between the outbox look and the lag look
  // could pass unseen: two quiet looks in a row, then.
  const quietLooksNeeded = pendingOrdersAreWork ? 1 : 2;
  let quietLooks = 0;
  while (true) {
    outstanding = await lookForWork(stack, kafkaBrokers, topics, pendingOrdersAreWork, relayMode).catch(
      (err: Error) => [`could not look: ${err.message}`],
    );
    quietLooks = outstanding.length === 0 ? quietLooks + 1 : 0;
    if (quietLooks >= quietLooksNeeded) return { reached: true, at: Date.now(), outstanding };
    if (Date.now() > deadline) return { reached: false, at: Date.now(), outstanding };
    await sleep(500);
  }
}

async function lookForWork(
  stack: ChaosStack,
  kafkaBrokers: string[],
  topics: Record<(typeof DATABASES)[number], string>,
  pendingOrdersAreWork: boolean,
  relayMode: RelayMode,
): Promise<string[]> {
  const outstanding: string[] = [];
  if (pendingOrdersAreWork) {
    const [pending] = await queryOnce<{ n: number }>(
      stack.databases.orders.url,
      `select count(*)::int as n from orders where status = 'PENDING'`,
    );
    if (pending?.n) outstanding.push(`${pending.n} orders PENDING`);
  }
  if (relayMode === 'debezium') outstanding.push(...(await rowsNotOnTopics(stack, kafkaBrokers, topics)));
  else {
    for (const database of DATABASES) {
      const [unpublished] = await queryOnce<{ n: number }>(
        stack.databases[database].url,
        `select count(*)::int as n from outbox where status in ('pending', 'in_flight')`,
      );
      if (unpublished?.n) outstanding.push(`${unpublished.n} ${database} outbox rows not yet published`);
    }
  }
  if (outstanding.length > 0) return outstanding; // lag is only worth asking the broker about now
  for (const consumer of DATABASES) {
    const lag = await consumerLag(
      kafkaBrokers,
      stack.groups[consumer],
      INPUTS[consumer].map((source) => topics[source]),
    );
    if (lag > 0) outstanding.push(`${consumer} consumer ${lag} messages behind`);
  }
  return outstanding;
}

/**
 * Debezium mode: the outbox rows whose event is not on their topic yet. The topics' sizes first
 * (fewer records than rows: not there yet, no need to read them), then the event ids themselves.
 */
async function rowsNotOnTopics(
  stack: ChaosStack,
  kafkaBrokers: string[],
  topics: Record<(typeof DATABASES)[number], string>,
): Promise<string[]> {
  const rows = {} as Record<(typeof DATABASES)[number], string[]>;
  for (const database of DATABASES) {
    const ids = await queryOnce<{ id: string }>(stack.databases[database].url, 'select id::text from outbox');
    rows[database] = ids.map((row) => row.id);
  }
  const sizes = await topicEnds(kafkaBrokers, Object.values(topics));
  const short = DATABASES.filter((database) => (sizes.get(topics[database]) ?? 0) < rows[database].length);
  if (short.length > 0)
    return short.map(
      (database) => `${database} outbox: ${rows[database].length} rows, fewer records on its topic`,
    );
  const messages = await readTopics(kafkaBrokers, Object.values(topics));
  const outstanding: string[] = [];
  for (const database of DATABASES) {
    const onTopic = new Set((messages.get(topics[database]) ?? []).map((message) => message.eventId));
    const missing = rows[database].filter((id) => !onTopic.has(id)).length;
    if (missing > 0) outstanding.push(`${missing} ${database} outbox rows not yet on ${topics[database]}`);
  }
  return outstanding;
}
