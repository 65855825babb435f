import { topicFor } from '@outbox/contracts';
import { queryOnce } from '../postgresClient.ts';
import { AGGREGATE_OF } from '../stackPlan.ts';
import { readTopic } from './topicReader.ts';

type ServiceDatabase = 'orders' | 'inventory' | 'billing';

/** One topic read from outside: its messages, and those whose outbox row the database does not have. */
type TopicAudit = { topic: string; messages: number; ghosts: number };

type GhostAudit = {
  topics: TopicAudit[];
  /** Acknowledged (201) orders the orders database does not have. */
  acknowledgedOrdersLost: number;
  /** Of those, the ones with an event on order.events: announced, then lost. */
  lostOrdersAnnounced: number;
  /** Orders still PENDING. */
  ordersUndecided: number;
};

/**
 * What an outside auditor sees after a failover: each service database's topic read from offset 0
 * and compared with that database's outbox. An event whose row is not there is a ghost: announced,
 * though the database that wrote it no longer has it.
 */
export async function auditGhosts(
  brokers: string[],
  databaseUrls: Record<ServiceDatabase, string>,
  acknowledged: string[],
): Promise<GhostAudit> {
  const topics: TopicAudit[] = [];
  let lostOrdersAnnounced = 0;
  const orderIds = new Set(await ids(databaseUrls.orders, 'select id::text from orders'));
  const lost = new Set(acknowledged.filter((id) => !orderIds.has(id)));
  for (const database of ['orders', 'inventory', 'billing'] as const) {
    const rows = new Set(await ids(databaseUrls[database], 'select id::text from outbox'));
    const topic = topicFor(AGGREGATE_OF[database]);
    const messages = await readTopic(brokers, topic, { timeoutMs: 120_000 });
    topics.push({
      topic,
      messages: messages.length,
      ghosts: messages.filter((m) => !m.eventId || !rows.has(m.eventId)).length,
    });
    if (database === 'orders') {
      lostOrdersAnnounced = new Set(messages.filter((m) => m.key && lost.has(m.key)).map((m) => m.key)).size;
    }
  }
  const [pending] = await ids(
    databaseUrls.orders,
    "select count(*)::text from orders where status = 'PENDING'",
  );
  return { topics, acknowledgedOrdersLost: lost.size, lostOrdersAnnounced, ordersUndecided: Number(pending) };
}

async function ids(url: string, sql: string): Promise<string[]> {
  return (await queryOnce<Record<string, string>>(url, sql)).map((row) => Object.values(row)[0] ?? '');
}
