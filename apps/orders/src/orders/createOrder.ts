import type { OutboxInsert } from '@outbox/events';
import type { Tx } from '../db.ts';
import { type FieldError, HttpProblem } from '../http/problem.ts';
import type { OrderRequest } from './orderRequest.ts';

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

const selectProducts = `
  select sku, currency, unit_price_cents
  from products
  where sku = any($1::text[])`;

/**
 * Price every line from the catalog (never from the client), or refuse the order with 422 naming
 * every line that cannot be ordered: an unknown sku, or one sold in another currency.
 */
export async function priceLines(tx: Tx, request: OrderRequest): Promise<OrderLine[]> {
  const products = await tx.$queryRawUnsafe<{ sku: string; currency: string; unit_price_cents: bigint }[]>(
    selectProducts,
    request.items.map((item) => item.sku),
  );
  const bySku = new Map(products.map((product) => [product.sku, product]));
  const lines: OrderLine[] = [];
  const errors: FieldError[] = [];
  request.items.forEach((item, index) => {
    const product = bySku.get(item.sku);
    const pointer = `#/items/${index}/sku`;
    if (!product) errors.push({ pointer, detail: `unknown sku ${item.sku}` });
    else if (product.currency !== request.currency) {
      errors.push({ pointer, detail: `${item.sku} is sold in ${product.currency}, not ${request.currency}` });
    } else {
      lines.push({
        sku: item.sku,
        quantity: item.quantity,
        unitPriceCents: BigInt(product.unit_price_cents),
      });
    }
  });
  if (errors.length > 0) {
    throw new HttpProblem(
      422,
      'urn:problem:unorderable-items',
      'Items cannot be ordered',
      errors.map((error) => error.detail).join('; '),
      errors,
    );
  }
  return lines;
}

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

/**
 * The order, its items and its outbox row in ONE statement: three data-modifying CTEs commit or
 * fail together, and inside the caller's transaction with everything else it wrote. One round
 * trip instead of one per table, so the outbox row costs the order transaction no extra statement
 * (docs/benchmarks.md#write-path). The event was validated by prepareEvent before it gets here.
 */
const insertOrderItemsAndEvent = `
  with o as (
    insert into orders (id, customer_id, currency, status, total_cents)
    values ($1::uuid, $2, $3, 'PENDING', $4::bigint)
    returning id, created_at
  ), i as (
    insert into order_items (order_id, sku, quantity, unit_price_cents)
    select o.id, l.sku, l.quantity, l.unit_price_cents
    from o, unnest($5::text[], $6::int[], $7::bigint[]) as l (sku, quantity, unit_price_cents)
  ), e as (
    insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
    select $8::uuid, $9, $10, $11, $12, $13::int, $14::jsonb, $15::jsonb
    from o
  )
  select created_at from o`;

/** Write `order` and `event` (its ORDER_CREATED) with one statement; returns the order as stored. */
export async function insertOrderWithEvent(
  tx: Tx,
  order: CreatedOrder,
  event: OutboxInsert,
): Promise<CreatedOrder> {
  const [row] = await tx.$queryRawUnsafe<{ created_at: Date | string }[]>(
    insertOrderItemsAndEvent,
    order.id,
    order.customerId,
    order.currency,
    order.totalCents.toString(),
    order.items.map((item) => item.sku),
    order.items.map((item) => item.quantity),
    order.items.map((item) => item.unitPriceCents.toString()),
    event.id,
    event.source,
    event.aggregateType,
    event.aggregateId,
    event.eventType,
    event.schemaVersion,
    event.payload,
    event.headers,
  );
  if (!row) throw new Error('order insert returned no row');
  return { ...order, createdAt: new Date(row.created_at) };
}
