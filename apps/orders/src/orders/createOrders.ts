import { insertOutboxRowsFrom, type OutboxInsert, outboxColumnArrays } from '@outbox/outbox';
import type { Tx } from '../db.ts';
import {
  type CreatedOrder,
  type KeyClaim,
  type OutcomeRow,
  type WriteOutcome,
  writeOutcome,
} from './createOrder.ts';

// Several orders and their ORDER_CREATED events in ONE statement: the group commit's write
// (placeOrders). Each order is decided alone, exactly as createOrder.ts's statement decides one:
// written with its items, its event and its key only if every one of its lines is priced as the
// catalog prices it and its key is not held; one order refused leaves the others written.

/** An order of the batch, with its event and the claim of its Idempotency-Key if it sent one. */
export type OrderWithEvent = { order: CreatedOrder; event: OutboxInsert; claim: KeyClaim | undefined };

/** The event arrays start here, after the orders' ($1-$6) and the lines' ($7-$10). */
const EVENT_PARAMETERS_FROM = 11;

const insertOrdersItemsAndEvents = `
  with ord (k, id, customer_id, currency, total_cents, key, request_hash) as (
    select u.k, u.id, u.customer_id, u.currency, u.total_cents, u.key, u.request_hash
    from unnest($1::uuid[], $2::text[], $3::char(3)[], $4::bigint[], $5::text[], $6::text[])
         with ordinality as u (id, customer_id, currency, total_cents, key, request_hash, k)
  ), line (k, sku, quantity, unit_price_cents) as (
    select * from unnest($7::int[], $8::text[], $9::int[], $10::bigint[])
  ), guard as (
    -- Per order, whether it may be written: each of its lines is sold in its currency at exactly
    -- the price its event carries, in this statement's snapshot.
    select ord.k, count(p.sku) = count(*) as all_priced
    from ord
    join line on line.k = ord.k
    left join products p
      on p.sku = line.sku and p.currency = ord.currency and p.unit_price_cents = line.unit_price_cents
    group by ord.k
  ), claim as (
    -- As for one order: a key is claimed only for an order that will be written, and a key held
    -- by a transaction still open makes this statement wait for it. Two orders of the batch with
    -- one key: the first claims it, the second finds it held.
    insert into idempotency_keys (key, request_hash, order_id)
    select ord.key, ord.request_hash, ord.id
    from ord join guard using (k)
    where guard.all_priced and ord.key is not null
    order by ord.k
    on conflict (key) do nothing
    returning order_id
  ), o as (
    insert into orders (id, customer_id, currency, status, total_cents)
    select ord.id, ord.customer_id, ord.currency, 'PENDING', ord.total_cents
    from ord join guard using (k)
    where guard.all_priced and (ord.key is null or exists (select 1 from claim where claim.order_id = ord.id))
    order by ord.k
    returning id, created_at
  ), i as (
    insert into order_items (order_id, sku, quantity, unit_price_cents)
    select o.id, line.sku, line.quantity, line.unit_price_cents
    from o join ord on ord.id = o.id join line on line.k = ord.k
  ), e as (
    ${insertOutboxRowsFrom(EVENT_PARAMETERS_FROM)}
    join o on o.id::text = e.aggregate_id
    order by e.n
  )
  select guard.all_priced, exists (select 1 from claim where claim.order_id = ord.id) as key_claimed, o.created_at
  from ord
  join guard using (k)
  left join o on o.id = ord.id
  order by ord.k`;

/**
 * Write every order of `batch` with its items and event (and key), in one statement of the
 * caller's transaction. One outcome per order, in the batch's order: written, or (nothing of that
 * order written) why not, as insertOrderWithEvent answers for one.
 */
export async function insertOrdersWithEvents(tx: Tx, batch: OrderWithEvent[]): Promise<WriteOutcome[]> {
  const lines = batch.flatMap(({ order }, k) => order.items.map((item) => ({ k: k + 1, item })));
  const rows = await tx.$queryRawUnsafe<OutcomeRow[]>(
    insertOrdersItemsAndEvents,
    batch.map(({ order }) => order.id),
    batch.map(({ order }) => order.customerId),
    batch.map(({ order }) => order.currency),
    batch.map(({ order }) => order.totalCents.toString()),
    batch.map(({ claim }) => claim?.key ?? null),
    batch.map(({ claim }) => claim?.requestHash ?? null),
    lines.map(({ k }) => k),
    lines.map(({ item }) => item.sku),
    lines.map(({ item }) => item.quantity),
    lines.map(({ item }) => item.unitPriceCents.toString()),
    ...outboxColumnArrays(batch.map(({ event }) => event)),
  );
  if (rows.length !== batch.length) {
    throw new Error(`the batch's statement answered ${rows.length} rows for ${batch.length} orders`);
  }
  return batch.map(({ order }, k) => writeOutcome([rows[k] as OutcomeRow], order));
}
