import type { WriteMode } from '@outbox/contracts';
import type { Replication } from '@outbox/devstack/postgres-pair';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { DatabaseName } from '../stack.ts';
import { readTopics, systemTopics, type TopicMessage } from '../topics.ts';

export type OutboxRow = {
  id: string;
  seq: number;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  status: 'pending' | 'in_flight' | 'published' | 'failed';
  last_error: string | null;
};
export type ProcessedRow = {
  event_id: string;
  event_type: string;
  /** When the consumer's transaction applied it (the database's clock); absent in hand-made snapshots. */
  processed_at?: Date;
};

/** What the scenario expects to be dead-lettered (its poison), by outbox row id. */
export type ExpectedDeadLetters = {
  /** Rows the relay must refuse and mark failed (e.g. larger than the broker accepts). */
  outboxFailed: string[];
  /** Events every consumer of their topic must send to `<topic>.dlt` (unreadable for them). */
  consumerDeadLetters: string[];
};

/**
 * Everything the invariants look at, read once after the system went quiet: the three databases
 * and every topic, directly. Nothing comes from the services' own counters except
 * `serviceDuplicateCounters`, which is only reported next to the measured figures.
 */
export type Snapshot = {
  writeMode: WriteMode;
  /**
   * What published the outboxes. The polling relays mark each row `published` once the broker
   * acknowledged it; in `debezium` mode the relay marks a row once the connector's slot confirmed
   * it, up to Connect's offset flush interval later, so only the topics tell what was published.
   */
  relayMode: RelayMode;
  /** Order ids the API acknowledged (201) to the load generator. */
  acknowledged: string[];
  initialStock: Map<string, number>;
  orders: {
    id: string;
    status: string;
    stock_status: string | null;
    payment_status: string | null;
    /** Read from the database; absent in hand-made snapshots. */
    created_at?: Date;
  }[];
  orderItems: { order_id: string; sku: string; quantity: number }[];
  /** (order, event type) → rows in order_history. */
  history: Map<string, number>;
  outbox: Record<DatabaseName, OutboxRow[]>;
  processed: Record<DatabaseName, ProcessedRow[]>;
  reservations: { order_id: string; status: string }[];
  reservationItems: { order_id: string; sku: string; quantity: number }[];
  stock: Map<string, number>;
  payments: { order_id: string; status: string }[];
  topics: { events: Record<DatabaseName, string>; deadLetters: string[] };
  messages: Map<string, TopicMessage[]>;
  /**
   * ORDER_CREATED events the orders process sent to Kafka itself, with no outbox row (a naive write
   * mode): one per distinct event id on the orders topic. Empty in the outbox mode, where every
   * event must have its row (no-ghost-events).
   */
  sentDirectly: { id: string; aggregate_id: string }[];
  groups: Record<DatabaseName, string>;
  expected: ExpectedDeadLetters;
  serviceDuplicateCounters: Partial<Record<DatabaseName, number>>;
  /** The orders database failed over to its standby during the run, which replicated this way. */
  failover?: { replication: Replication };
};

export type RelayMode = 'polling' | 'debezium';

/** What the run knows (the rest of the snapshot is read), and where to read the rest. */
type SnapshotSource = Pick<
  Snapshot,
  | 'writeMode'
  | 'relayMode'
  | 'acknowledged'
  | 'initialStock'
  | 'groups'
  | 'expected'
  | 'serviceDuplicateCounters'
  | 'failover'
> & { databaseUrls: Record<DatabaseName, string>; kafkaBrokers: string[]; topicPrefix: string };

const outboxSql = `
  select id, seq::int as seq, aggregate_type, aggregate_id, event_type, status, last_error
    from outbox order by seq`;

export async function readStock(inventoryUrl: string): Promise<Map<string, number>> {
  const rows = await queryOnce<{ sku: string; available: number }>(
    inventoryUrl,
    'select sku, available from stock',
  );
  return new Map(rows.map((row) => [row.sku, row.available]));
}

export async function takeSnapshot(source: SnapshotSource): Promise<Snapshot> {
  const { databaseUrls, kafkaBrokers, topicPrefix, ...known } = source;
  const { orders: ordersUrl, inventory: inventoryUrl, billing: billingUrl } = databaseUrls;
  const outbox = async (url: string) => queryOnce<OutboxRow>(url, outboxSql);
  const processed = async (url: string) =>
    queryOnce<ProcessedRow>(url, 'select event_id::text, event_type, processed_at from processed_events');
  const topics = systemTopics(topicPrefix);
  const messages = await readTopics(kafkaBrokers, [...Object.values(topics.events), ...topics.deadLetters]);
  const ordersOutbox = await outbox(ordersUrl);
  const history = await queryOnce<{ order_id: string; event_type: string; n: number }>(
    ordersUrl,
    'select order_id::text, event_type, count(*)::int as n from order_history group by 1, 2',
  );
  return {
    ...known,
    orders: await queryOnce(
      ordersUrl,
      'select id::text, status, stock_status, payment_status, created_at from orders',
    ),
    orderItems: await queryOnce(ordersUrl, 'select order_id::text, sku, quantity from order_items'),
    history: new Map(history.map((row) => [`${row.order_id}/${row.event_type}`, row.n])),
    outbox: {
      orders: ordersOutbox,
      inventory: await outbox(inventoryUrl),
      billing: await outbox(billingUrl),
    },
    processed: {
      orders: await processed(ordersUrl),
      inventory: await processed(inventoryUrl),
      billing: await processed(billingUrl),
    },
    reservations: await queryOnce(inventoryUrl, 'select order_id::text, status from reservations'),
    reservationItems: await queryOnce(
      inventoryUrl,
      'select order_id::text, sku, quantity from reservation_items',
    ),
    stock: await readStock(inventoryUrl),
    payments: await queryOnce(billingUrl, 'select order_id::text, status from payments'),
    topics,
    messages,
    sentDirectly:
      source.writeMode === 'outbox'
        ? []
        : sentWithoutRow(messages.get(topics.events.orders) ?? [], ordersOutbox),
  };
}

/** The ORDER_CREATED messages on the orders topic that no outbox row accounts for, once per event id. */
function sentWithoutRow(messages: TopicMessage[], outbox: OutboxRow[]): Snapshot['sentDirectly'] {
  const rows = new Set(outbox.map((row) => row.id));
  const sent = new Map<string, string>();
  for (const message of messages) {
    if (message.type !== 'ORDER_CREATED' || !message.eventId || message.key === undefined) continue;
    if (!rows.has(message.eventId)) sent.set(message.eventId, message.key);
  }
  return [...sent].map(([id, aggregate_id]) => ({ id, aggregate_id }));
}

/**
 * Every ORDER_CREATED the orders service produced, as outbox-row-like records: its outbox rows,
 * and in a naive write mode the events it sent to Kafka itself.
 */
export function orderCreatedEvents(s: Snapshot): { id: string; aggregate_id: string }[] {
  const poison = new Set([...s.expected.outboxFailed, ...s.expected.consumerDeadLetters]);
  const rows = s.outbox.orders.filter((row) => row.event_type === 'ORDER_CREATED' && !poison.has(row.id));
  return [...rows, ...s.sentDirectly];
}
