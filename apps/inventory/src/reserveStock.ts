import { type NewEvent, type OrderCreatedV1, stockRejected, stockReserved } from '@outbox/contracts';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';

export const EVENT_SOURCE = '/inventory';

export type ReserveOutcome = 'RESERVED' | 'REJECTED' | 'REFUSED_CANCELLED' | 'ALREADY_DECIDED';

type Line = { sku: string; quantity: number };
/** What a run's handler answers for each event (the consumer's `Applied`). */
export type Decision<Outcome extends string = ReserveOutcome> = { outcome: Outcome; replies: NewEvent[] };

// Each order's claim: its reservation row. An order whose row is already there was decided by an
// earlier ORDER_CREATED (another event id), or its ORDER_CANCELLED got here first. The primary
// key also serializes a create and a cancel of one order that run at the same time.
const claimOrders = `
  insert into reservations (order_id, status)
  select order_id, 'RESERVED' from unnest($1::uuid[]) as c (order_id)
  on conflict (order_id) do nothing
  returning order_id::text`;

const lockExisting = `
  select order_id::text, status from reservations where order_id = any($1::uuid[]) for update`;

// Every stock row the claimed orders need, with its level, locked in SKU order. In the consumer
// they are locked already, with every other stock row of the chunk (applyOrderEvents: why that
// keeps chunks from deadlocking), so this takes no new lock there. The locks see the latest
// committed stock, so orders of concurrent chunks cannot oversell.
const lockStock = `
  select sku, available from stock where sku = any($1::text[]) order by sku for update`;

// The decisions, written back in one statement: the new stock levels, the items of each reserved
// order, and the reason of each rejected one. `available >= 0` in the schema is the last line of
// defence behind the decisions.
const saveDecisions = `
  with stock_levels as (
    update stock s set available = l.available
      from unnest($1::text[], $2::int[]) as l (sku, available)
     where s.sku = l.sku
  ), items as (
    insert into reservation_items (order_id, sku, quantity)
    select order_id, sku, quantity from unnest($3::uuid[], $4::text[], $5::int[]) as i (order_id, sku, quantity)
  )
  update reservations r set status = 'REJECTED', reason = x.reason
    from unnest($6::uuid[], $7::text[]) as x (order_id, reason)
   where r.order_id = x.order_id`;

/**
 * ORDER_CREATED, for a run of orders in offset order, inside the consumer's chunk transaction:
 * reserve every line of each order or none, and answer STOCK_RESERVED or STOCK_REJECTED.
 *
 * Load, decide, save: the orders are claimed and the stock rows they need locked with two
 * statements, the decisions taken here one order after the other exactly as if the orders had
 * come one by one (an earlier order of the run takes the last units, a later one is rejected),
 * and written back with one statement. So a run costs the same few round trips whatever its size.
 */
export async function reserveStocks(tx: SqlExecutor, orders: OrderCreatedV1[]): Promise<Decision[]> {
  const loaded = await load(tx, orders);
  const plan: Plan = { stock: loaded.stock, changed: new Set(), items: [], rejected: [] };
  const decisions = orders.map((order) => decide(order, loaded, plan));
  await save(tx, plan);
  return decisions;
}

type Loaded = {
  /** The orders this run claimed: new to inventory. */
  claimed: Set<string>;
  /** The status of each order decided before (or cancelled first), locked. */
  earlier: Map<string, string>;
  /** Units on hand of every SKU the claimed orders name, locked. */
  stock: Map<string, number>;
};

/** What the decisions change, written back in one statement (saveDecisions). */
type Plan = {
  stock: Map<string, number>;
  changed: Set<string>;
  items: { orderId: string; line: Line }[];
  rejected: { orderId: string; reason: string }[];
};

async function load(tx: SqlExecutor, orders: OrderCreatedV1[]): Promise<Loaded> {
  const claimedRows = await queryRows<{ order_id: string }>(tx, claimOrders, [
    orders.map((order) => order.orderId),
  ]);
  const claimed = new Set(claimedRows.map((row) => row.order_id));
  const existing = orders.filter((order) => !claimed.has(order.orderId)).map((order) => order.orderId);
  const earlierRows =
    existing.length === 0
      ? []
      : await queryRows<{ order_id: string; status: string }>(tx, lockExisting, [existing]);
  const wanted = orders.filter((order) => claimed.has(order.orderId));
  const skus = [...new Set(wanted.flatMap((order) => order.items.map((item) => item.sku)))].sort();
  const stockRows =
    skus.length === 0 ? [] : await queryRows<{ sku: string; available: number }>(tx, lockStock, [skus]);
  return {
    claimed,
    earlier: new Map(earlierRows.map((row) => [row.order_id, row.status])),
    stock: new Map(stockRows.map((row) => [row.sku, row.available])),
  };
}

/** One order's decision, taken as if the orders of the run had come one by one. */
function decide(order: OrderCreatedV1, { claimed, earlier }: Loaded, plan: Plan): Decision {
  if (!claimed.delete(order.orderId)) {
    // Decided before (or earlier in this run). A CANCELLED row: its cancel came first; refuse
    // it now, once, so that orders hears an answer from inventory.
    if (earlier.get(order.orderId) !== 'CANCELLED') return { outcome: 'ALREADY_DECIDED', replies: [] };
    earlier.set(order.orderId, 'REJECTED');
    const reason = 'order was cancelled before inventory received it';
    plan.rejected.push({ orderId: order.orderId, reason });
    return { outcome: 'REFUSED_CANCELLED', replies: [rejection(order.orderId, reason)] };
  }
  const lines = mergeLines(order.items);
  const short = firstShortLine(lines, plan.stock);
  if (short) {
    plan.rejected.push({ orderId: order.orderId, reason: short.reason });
    return { outcome: 'REJECTED', replies: [rejection(order.orderId, short.reason, short.sku)] };
  }
  for (const line of lines) {
    plan.stock.set(line.sku, (plan.stock.get(line.sku) as number) - line.quantity);
    plan.changed.add(line.sku);
    plan.items.push({ orderId: order.orderId, line });
  }
  return { outcome: 'RESERVED', replies: [stockReserved({ orderId: order.orderId, items: lines })] };
}

async function save(tx: SqlExecutor, { stock, changed, items, rejected }: Plan): Promise<void> {
  if (changed.size === 0 && rejected.length === 0) return;
  await queryRows(tx, saveDecisions, [
    [...changed],
    [...changed].map((sku) => stock.get(sku)),
    items.map((item) => item.orderId),
    items.map((item) => item.line.sku),
    items.map((item) => item.line.quantity),
    rejected.map((order) => order.orderId),
    rejected.map((order) => order.reason),
  ]);
}

function rejection(orderId: string, reason: string, sku?: string): NewEvent {
  return stockRejected({ orderId, reason, ...(sku ? { sku } : {}) });
}

/** One line per SKU, sorted: an order that names a SKU twice wants the sum. */
function mergeLines(items: readonly Line[]): Line[] {
  const quantities = new Map<string, number>();
  for (const item of items) quantities.set(item.sku, (quantities.get(item.sku) ?? 0) + item.quantity);
  return [...quantities]
    .map(([sku, quantity]) => ({ sku, quantity }))
    .sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
}

/** Why the order cannot be reserved from `stock` as it stands: its first unknown or short line. */
function firstShortLine(
  lines: Line[],
  stock: Map<string, number>,
): { sku: string; reason: string } | undefined {
  for (const line of lines) {
    const have = stock.get(line.sku);
    if (have === undefined) return { sku: line.sku, reason: `unknown sku ${line.sku}` };
    if (have < line.quantity)
      return {
        sku: line.sku,
        reason: `insufficient stock for ${line.sku}: wanted ${line.quantity}, available ${have}`,
      };
  }
  return undefined;
}
