import { type NewEvent, type OrderCreatedV1, orderCreated as orderCreatedEvent } from '@outbox/contracts';
import { insertOutboxRow, type OutboxInsert, outboxValues } from '@outbox/outbox';
import type { Tx } from '../db.ts';
import type { OrderRequest } from './orderRequest.ts';

// An order and its ORDER_CREATED event: what they hold, and the one statement that writes both.

/** The `source` of every event the orders service writes. */
export const EVENT_SOURCE = '/orders';

export type OrderLine = { sku: string; quantity: number; unitPriceCents: bigint };

/** An order as the API and its ORDER_CREATED event describe it (the columns of orders, with items). */
export type CreatedOrder = {
  id: string;
  customerId: string;
  currency: string;
  status: string;
  totalCents: bigint;
  createdAt: Date;
  stockStatus: string | null;
  paymentStatus: string | null;
  cancelReason: string | null;
  items: (OrderLine & { orderId: string })[];
};

/** The new order, before it is written: PENDING, total from the priced lines. */
export function newOrder(orderId: string, request: OrderRequest, lines: OrderLine[]): CreatedOrder {
  return {
    id: orderId,
    customerId: request.customerId,
    currency: request.currency,
    status: 'PENDING',
    totalCents: lines.reduce((sum, line) => sum + line.unitPriceCents * BigInt(line.quantity), 0n),
    createdAt: new Date(), // replaced by the database's now() once written
    stockStatus: null,
    paymentStatus: null,
    cancelReason: null,
    items: lines.map((line) => ({ orderId, ...line })),
  };
}

/** The order's ORDER_CREATED event: what inventory and billing need to reserve and charge it. */
export function orderCreated(order: CreatedOrder): NewEvent<OrderCreatedV1> {
  return orderCreatedEvent({
    orderId: order.id,
    customerId: order.customerId,
    currency: order.currency,
    totalCents: order.totalCents.toString(),
    items: order.items.map((item) => ({
      sku: item.sku,
      quantity: item.quantity,
      unitPriceCents: item.unitPriceCents.toString(),
    })),
  });
}

/**
 * The statement's order part, $1-$9: the lines priced against the catalog, the key's claim, the
 * order and its items, each written only when every line is priced as the catalog prices it.
 */
export const ORDER_CTES = `
  with line (sku, quantity, unit_price_cents) as (
    select * from unnest($5::text[], $6::int[], $7::bigint[])
  ), priced as (
    -- The lines the catalog sells in the order's currency at exactly the price the event
    -- carries, in this statement's snapshot: a price read before a change finds no row here.
    select line.sku
    from line
    join products p
      on p.sku = line.sku and p.currency = $3::char(3) and p.unit_price_cents = line.unit_price_cents
  ), guard as (
    -- One row, always: whether the whole order may be written.
    select count(*) = cardinality($5::text[]) as all_priced from priced
  ), claim as (
    -- The key is claimed only for an order that will be written. Its primary key serializes
    -- requests with the same key: this insert waits until the holder's transaction ends, then
    -- claims nothing (it committed) or claims the key (it rolled back).
    insert into idempotency_keys (key, request_hash, order_id)
    select $8::text, $9::text, $1::uuid
    from guard
    where guard.all_priced and $8::text is not null
    on conflict (key) do nothing
    returning key
  ), o as (
    insert into orders (id, customer_id, currency, status, total_cents)
    select $1::uuid, $2::text, $3::char(3), 'PENDING', $4::bigint
    from guard
    where guard.all_priced and ($8::text is null or exists (select 1 from claim))
    returning id, created_at
  ), i as (
    insert into order_items (order_id, sku, quantity, unit_price_cents)
    select o.id, line.sku, line.quantity, line.unit_price_cents
    from o, line
  )`;

/** The statement's answer: whether the order was written, and if not, why (WriteOutcome). */
export const WRITE_OUTCOME = `
  select guard.all_priced, exists (select 1 from claim) as key_claimed, o.created_at
  from guard
  left join o on true`;

/** The outbox row's parameters start here, after the order's ($1-$7) and the key claim's ($8, $9). */
const EVENT_PARAMETERS_FROM = 10;

/**
 * The whole happy path of POST /orders in ONE statement: the Idempotency-Key's claim, the order,
 * its items and its outbox row, written only when every line's price is the catalog's. Data-
 * modifying CTEs commit or fail together, inside the caller's transaction, so the outbox row
 * costs the order transaction no statement of its own (docs/benchmarks.md#write-path). The event
 * (from $10 on, in the outbox package's column order: insertOutboxRow) was validated by
 * prepareEvent before it gets here; the statement inserts it as it is. Nothing is written on any
 * other path: the final select says what happened.
 */
const insertOrderItemsAndEvent = `
  ${ORDER_CTES}, e as (
    ${insertOutboxRow(EVENT_PARAMETERS_FROM)}
    from o
  )
  ${WRITE_OUTCOME}`;

/** An Idempotency-Key and the hash of the request that claims it. */
export type KeyClaim = { key: string; requestHash: string };

/**
 * What the statement did. `written`: order, items, event (and key) are in. Otherwise nothing was
 * written, and `allPriced` / `keyClaimed` say why: a price or currency the catalog disagrees with,
 * or a key an earlier request holds.
 */
export type WriteOutcome =
  | { written: true; order: CreatedOrder }
  | { written: false; allPriced: boolean; keyClaimed: boolean };

/** Write `order` and `event` (its ORDER_CREATED), claiming `claim` when given, in one statement. */
export async function insertOrderWithEvent(
  tx: Tx,
  order: CreatedOrder,
  event: OutboxInsert,
  claim?: KeyClaim,
): Promise<WriteOutcome> {
  const rows = await tx.$queryRawUnsafe<OutcomeRow[]>(
    insertOrderItemsAndEvent,
    ...orderParameters(order, claim),
    ...outboxValues(event),
  );
  return writeOutcome(rows, order);
}

export type OutcomeRow = { all_priced: boolean; key_claimed: boolean; created_at: Date | string | null };

/** ORDER_CTES' parameters, $1-$9. */
export function orderParameters(order: CreatedOrder, claim: KeyClaim | undefined): unknown[] {
  return [
    order.id,
    order.customerId,
    order.currency,
    order.totalCents.toString(),
    order.items.map((item) => item.sku),
    order.items.map((item) => item.quantity),
    order.items.map((item) => item.unitPriceCents.toString()),
    claim?.key ?? null,
    claim?.requestHash ?? null,
  ];
}

export function writeOutcome([row]: OutcomeRow[], order: CreatedOrder): WriteOutcome {
  if (!row) throw new Error('order insert returned no row');
  if (row.created_at === null) {
    return { written: false, allPriced: row.all_priced, keyClaimed: row.key_claimed };
  }
  return { written: true, order: { ...order, createdAt: new Date(row.created_at) } };
}
