import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { difference, type MetricsUrls, scrapeDuplicates } from './duplicateMetrics.ts';
import type { OrderKind } from './orderMix.ts';
import { type LatencySummary, summarizeLatencies } from './percentiles.ts';

type Service = 'orders' | 'inventory' | 'billing';
const SERVICES: readonly Service[] = ['orders', 'inventory', 'billing'];

type OutcomeOptions = {
  databaseUrls: Record<Service, string>;
  /** The orders the run created (the accepted ones). */
  orderIds: string[];
  /** Base URLs of the services' /metrics, for the duplicates each consumer skipped. */
  metricsUrls?: MetricsUrls;
  /** Give up waiting for the orders to settle after this long (default 60 s); then measure anyway. */
  timeoutMs?: number;
  /** Order id → the kind the load generator meant it to be: adds final states per kind. */
  kinds?: Record<string, OrderKind>;
  /** The duplicate counters scraped before the run (scrapeDuplicates), so only the run's own count. */
  duplicatesBefore?: Record<string, number>;
  /**
   * The outboxes are published by CDC: nothing marks their rows published (docs/design.md#polling-or-cdc),
   * so settled means every order decided, whatever the outboxes' statuses say.
   */
  outboxRowsStayPending?: boolean;
};

export type EventCounts = {
  /** Per service outbox: acknowledged by Kafka. */
  published: Record<string, number>;
  /** Per service outbox: not yet acknowledged (status pending or in_flight). */
  pending: Record<string, number>;
  /** Per service outbox: dead-lettered, waiting for an operator's redrive. */
  failed: Record<string, number>;
  /** Published events by event type, over all outboxes. */
  publishedByType: Record<string, number>;
};

export type Outcome = {
  /** CONFIRMED, CANCELLED: <reason>, PENDING, or MISSING (accepted but not in the database: a bug). */
  finalStates: Record<string, number>;
  /** The same per kind of order, when `kinds` was given. */
  finalStatesByKind?: Record<string, Record<string, number>>;
  /** Orders still PENDING when the wait ended. */
  pending: string[];
  /** Every order decided, every compensation reported back, no event of the run left in an outbox. */
  settled: boolean;
  /** Order created → ORDER_CONFIRMED, both timestamps from the orders database. */
  latencyMs: LatencySummary;
  /** Order created → ORDER_CANCELLED, likewise. */
  cancelLatencyMs: LatencySummary;
  events: EventCounts;
  /** Events of the run each consumer applied, from its processed_events. */
  consumed: Record<string, number>;
  /** Events each consumer received again and skipped, from its /metrics (omitted without metricsUrls). */
  duplicatesSkipped?: Record<string, number>;
  waitedMs: number;
  /** What could not be measured, and why. */
  warnings: string[];
};

/** One accepted order as the orders database sees it, with its decision time when it has one. */
type OrderRow = {
  id: string;
  status: string;
  stock_status: string | null;
  payment_status: string | null;
  cancel_reason: string | null;
  decision_ms: number | null;
};

// created_at and the decision's history row are both stamped by the orders database (now() of
// each transaction), so the latency needs no agreement between the client's and server's clocks.
const ordersOfRun = `
  select o.id::text, o.status, o.stock_status, o.payment_status, o.cancel_reason,
         (extract(epoch from d.at - o.created_at) * 1000)::float8 as decision_ms
  from orders o
  left join lateral (
    select h.at from order_history h
    where h.order_id = o.id and h.event_type in ('ORDER_CONFIRMED', 'ORDER_CANCELLED')
    order by h.id
    limit 1
  ) d on true
  where o.id = any($1::uuid[])`;

// Every event in every service is keyed by its order id (aggregate_id), so this is exactly the
// run's events, whatever else the database holds. in_flight counts as pending: not acknowledged yet.
const outboxOfRun = `
  select event_type, case when status = 'in_flight' then 'pending' else status end as status, count(*)::int as n
  from outbox
  where aggregate_id = any($1::text[])
  group by 1, 2`;

const eventIdsOfRun = 'select id::text from outbox where aggregate_id = any($1::text[])';

const consumedOfRun = `
  select consumer, count(*)::int as n
  from processed_events
  where event_id = any($1::uuid[])
  group by consumer`;

type Snapshot = { orders: OrderRow[]; events: EventCounts; consumed: Record<string, number> };

/**
 * Wait until every order of the run has settled (or `timeoutMs` passed), then measure what the
 * system did with them: final states, decision latency, events per outbox, events consumed,
 * duplicates skipped. Reads the services' own databases; writes nothing.
 */
export async function collectOutcome(options: OutcomeOptions): Promise<Outcome> {
  const clients = Object.fromEntries(
    SERVICES.map((service) => [service, new pg.Client({ connectionString: options.databaseUrls[service] })]),
  ) as Record<Service, pg.Client>;
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? 60_000);
  try {
    await Promise.all(SERVICES.map((service) => clients[service].connect()));
    let previous: Snapshot | undefined;
    let snapshot = await measure(clients, options.orderIds);
    // Settled is judged on two snapshots a poll apart: the last step of a cancellation (inventory
    // or billing recording an ORDER_CANCELLED it had nothing to undo for) shows nowhere else.
    while (!(isSettled(snapshot, options) && sameCounts(snapshot, previous)) && Date.now() < deadline) {
      await sleep(500);
      previous = snapshot;
      snapshot = await measure(clients, options.orderIds);
    }
    return await toOutcome(snapshot, options, started);
  } finally {
    await Promise.allSettled(SERVICES.map((service) => clients[service].end()));
  }
}

async function measure(clients: Record<Service, pg.Client>, orderIds: string[]): Promise<Snapshot> {
  const orders = (await clients.orders.query<OrderRow>(ordersOfRun, [orderIds])).rows;
  const events: EventCounts = { published: {}, pending: {}, failed: {}, publishedByType: {} };
  const eventIds: string[] = [];
  for (const service of SERVICES) {
    for (const status of ['published', 'pending', 'failed'] as const) events[status][service] = 0;
    const rows = (await clients[service].query(outboxOfRun, [orderIds])).rows;
    for (const { event_type, status, n } of rows as { event_type: string; status: string; n: number }[]) {
      const byStatus = events[status as 'published' | 'pending' | 'failed'];
      byStatus[service] = (byStatus[service] ?? 0) + n;
      if (status === 'published')
        events.publishedByType[event_type] = (events.publishedByType[event_type] ?? 0) + n;
    }
    const ids = (await clients[service].query<{ id: string }>(eventIdsOfRun, [orderIds])).rows;
    for (const { id } of ids) eventIds.push(id);
  }
  const consumed: Record<string, number> = {};
  for (const service of SERVICES) {
    const rows = (await clients[service].query<{ consumer: string; n: number }>(consumedOfRun, [eventIds]))
      .rows;
    for (const { consumer, n } of rows) consumed[consumer] = n;
  }
  return { orders, events, consumed };
}

/**
 * The saga is over for an order when it is CONFIRMED, or CANCELLED with nothing left granted
 * (stock rejected or released, payment declined or voided), and no event of the run waits in an
 * outbox. A dead-lettered (failed) event never moves without an operator, so it does not count as waiting.
 */
function isSettled(snapshot: Snapshot, options: OutcomeOptions): boolean {
  const done = (order: OrderRow) =>
    order.status === 'CONFIRMED' ||
    (order.status === 'CANCELLED' &&
      (order.stock_status === 'REJECTED' || order.stock_status === 'RELEASED') &&
      (order.payment_status === 'DECLINED' || order.payment_status === 'VOIDED'));
  return (
    snapshot.orders.every(done) &&
    (options.outboxRowsStayPending === true || Object.values(snapshot.events.pending).every((n) => n === 0))
  );
}

function sameCounts(a: Snapshot, b: Snapshot | undefined): boolean {
  return b !== undefined && JSON.stringify([a.events, a.consumed]) === JSON.stringify([b.events, b.consumed]);
}

/** "CANCELLED: insufficient stock for MN-303" — the reason up to its first colon, so states stay few. */
function stateOf(order: OrderRow | undefined): string {
  if (!order) return 'MISSING';
  if (order.status !== 'CANCELLED' || !order.cancel_reason) return order.status;
  return `CANCELLED: ${order.cancel_reason.split(':')[0]}`;
}

async function toOutcome(snapshot: Snapshot, options: OutcomeOptions, started: number): Promise<Outcome> {
  const byId = new Map(snapshot.orders.map((order) => [order.id, order]));
  const finalStates: Record<string, number> = {};
  const byKind: Record<string, Record<string, number>> = {};
  for (const id of options.orderIds) {
    const state = stateOf(byId.get(id));
    finalStates[state] = (finalStates[state] ?? 0) + 1;
    const kind = options.kinds?.[id];
    if (kind) {
      byKind[kind] ??= {};
      byKind[kind][state] = (byKind[kind][state] ?? 0) + 1;
    }
  }
  const decisionTimes = (status: string) =>
    snapshot.orders
      .filter((o) => o.status === status && o.decision_ms !== null)
      .map((o) => o.decision_ms as number);

  const warnings: string[] = [];
  let duplicatesSkipped: Record<string, number> | undefined;
  if (options.metricsUrls) {
    const scraped = await scrapeDuplicates(options.metricsUrls);
    duplicatesSkipped = difference(scraped.byConsumer, options.duplicatesBefore);
    for (const service of scraped.unreadable) warnings.push(`duplicates not counted: cannot read ${service}`);
  }
  const outcome: Outcome = {
    finalStates,
    ...(options.kinds ? { finalStatesByKind: byKind } : {}),
    pending: snapshot.orders.filter((order) => order.status === 'PENDING').map((order) => order.id),
    settled: isSettled(snapshot, options),
    latencyMs: summarizeLatencies(decisionTimes('CONFIRMED')),
    cancelLatencyMs: summarizeLatencies(decisionTimes('CANCELLED')),
    events: snapshot.events,
    consumed: snapshot.consumed,
    ...(duplicatesSkipped ? { duplicatesSkipped } : {}),
    waitedMs: Date.now() - started,
    warnings,
  };
  if (!outcome.settled) warnings.push(`not settled after ${outcome.waitedMs} ms: the numbers are a snapshot`);
  return outcome;
}
