import {
  type OrderCreatedV1,
  STOCK_REJECTED,
  STOCK_RESERVED,
  type StockRejectedV1,
  type StockReservedV1,
  writeEvent,
} from '@outbox/events';
import type { Tx } from './db.ts';

export const EVENT_SOURCE = '/inventory';

export type ReserveOutcome = 'RESERVED' | 'REJECTED' | 'REFUSED_CANCELLED' | 'ALREADY_DECIDED';

/**
 * ORDER_CREATED: reserve every line of the order or none, and say which through the inventory
 * outbox (STOCK_RESERVED or STOCK_REJECTED), in the consumer's applyOnce transaction.
 *
 * The reservation row is inserted first: it is the order's claim. If a row is already there, the
 * order's ORDER_CANCELLED got here first (a replayed ORDER_CREATED arriving after its cancel), and
 * the create is refused with STOCK_REJECTED instead of reserving stock nothing would release. The
 * primary key also serializes a create and a cancel of one order that run at the same time.
 */
export async function reserveStock(tx: Tx, order: OrderCreatedV1): Promise<ReserveOutcome> {
  const claimed = await tx.$queryRaw<unknown[]>`
    insert into reservations (order_id, status) values (${order.orderId}::uuid, 'RESERVED')
    on conflict (order_id) do nothing
    returning order_id`;
  if (claimed.length === 0) return refuseIfCancelled(tx, order);

  const lines = mergeLines(order.items);
  const skus = lines.map((line) => line.sku);
  const quantities = lines.map((line) => line.quantity);
  // One statement for every line: lock the stock rows in SKU order (two orders sharing SKUs never
  // deadlock), and decrement them only if every line is there in full (all or nothing). The locks
  // see the latest committed stock, so concurrent orders cannot oversell; `available >= 0` in the
  // schema is the last line of defence.
  const decremented = await tx.$queryRaw<{ sku: string }[]>`
    with wanted as (
      select sku, quantity from unnest(${skus}::text[], ${quantities}::int[]) as w (sku, quantity)
    ), locked as (
      select s.sku, s.available, w.quantity
        from stock s join wanted w on w.sku = s.sku
       order by s.sku
         for update of s
    )
    update stock s set available = s.available - l.quantity
      from locked l
     where s.sku = l.sku
       and (select count(*) from locked where available >= quantity) = ${lines.length}
    returning s.sku`;
  if (decremented.length !== lines.length) {
    const short = await firstShortLine(tx, lines);
    return reject(tx, order.orderId, short.reason, short.sku);
  }

  await tx.$executeRaw`
    insert into reservation_items (order_id, sku, quantity)
    select ${order.orderId}::uuid, sku, quantity
      from unnest(${skus}::text[], ${quantities}::int[]) as l (sku, quantity)`;
  const data: StockReservedV1 = { orderId: order.orderId, items: lines };
  await writeEvent(tx, EVENT_SOURCE, reply(STOCK_RESERVED, order.orderId, data));
  return 'RESERVED';
}

/**
 * The order already has a row. CANCELLED: its cancel came first; refuse it now, once, so that
 * orders hears an answer from inventory. Anything else: it was decided by an earlier ORDER_CREATED
 * of the same order (another event id), and deciding again would reserve twice.
 */
async function refuseIfCancelled(tx: Tx, order: OrderCreatedV1): Promise<ReserveOutcome> {
  const [existing] = await tx.$queryRaw<{ status: string }[]>`
    select status from reservations where order_id = ${order.orderId}::uuid for update`;
  if (existing?.status !== 'CANCELLED') return 'ALREADY_DECIDED';
  await reject(tx, order.orderId, 'order was cancelled before inventory received it');
  return 'REFUSED_CANCELLED';
}

async function reject(tx: Tx, orderId: string, reason: string, sku?: string): Promise<'REJECTED'> {
  await tx.$executeRaw`
    update reservations set status = 'REJECTED', reason = ${reason} where order_id = ${orderId}::uuid`;
  const data: StockRejectedV1 = { orderId, reason, ...(sku ? { sku } : {}) };
  await writeEvent(tx, EVENT_SOURCE, reply(STOCK_REJECTED, orderId, data));
  return 'REJECTED';
}

type Line = { sku: string; quantity: number };

/** One line per SKU, sorted: the single update above must not see a stock row twice. */
function mergeLines(items: readonly Line[]): Line[] {
  const quantities = new Map<string, number>();
  for (const item of items) quantities.set(item.sku, (quantities.get(item.sku) ?? 0) + item.quantity);
  return [...quantities]
    .map(([sku, quantity]) => ({ sku, quantity }))
    .sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
}

/** Why the order could not be reserved: the first line that is unknown or short. */
async function firstShortLine(tx: Tx, lines: Line[]): Promise<{ sku: string; reason: string }> {
  const stock = await tx.$queryRaw<{ sku: string; available: number }[]>`
    select sku, available from stock where sku = any(${lines.map((line) => line.sku)}::text[])`;
  const available = new Map(stock.map((row) => [row.sku, row.available]));
  for (const line of lines) {
    const have = available.get(line.sku);
    if (have === undefined) return { sku: line.sku, reason: `unknown sku ${line.sku}` };
    if (have < line.quantity)
      return {
        sku: line.sku,
        reason: `insufficient stock for ${line.sku}: wanted ${line.quantity}, available ${have}`,
      };
  }
  // Only when the stock moved between the decrement and this read.
  const first = lines[0] as Line;
  return { sku: first.sku, reason: `insufficient stock for ${first.sku}` };
}

/** Inventory's events are about the order's reservation, keyed by the order id. */
export function reply<T>(type: string, orderId: string, data: T) {
  return { type, schemaVersion: 1, aggregateType: 'reservation', aggregateId: orderId, data };
}
