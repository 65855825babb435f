/**
 * The orders write paths production has left behind, kept on purpose as baselines: each name
 * says "UntilNow" (or what it leaves out), so no reader takes one for the production path
 * (placeOrder in apps/orders, which bench/write-path/variants.ts measures as F1).
 */
import { randomUUID } from 'node:crypto';
import {
  EVENT_SOURCE,
  newOrder,
  type OrderRequest,
  orderCreated,
  type Prisma,
  requestHash,
  type Tx,
} from '@outbox/orders';
import { prepareEvent, writeEvent } from '@outbox/outbox';

/**
 * D: a copy of the statement writeEvent sends (@outbox/outbox does not export it), sent without
 * writeEvent's zod validation and trace-context injection, to price those two.
 */
export const writeEventStatementCopySql = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
  values ($1::uuid, $2, $3, $4, $5, $6::int, $7::jsonb, $8::jsonb)
  returning id`;

/** Order + items in one statement, without the outbox row (E0: the business write alone). */
export const insertOrderUntilNowSql = `
  with o as (
    insert into orders (id, customer_id, currency, status, total_cents)
    values ($1::uuid, $2, $3, 'PENDING', $4::bigint)
    returning id
  ), i as (
    insert into order_items (order_id, sku, quantity, unit_price_cents)
    select o.id, l.sku, l.quantity, l.unit_price_cents
    from o, unnest($5::text[], $6::int[], $7::bigint[]) as l (sku, quantity, unit_price_cents)
  )
  select id from o`;

/**
 * The catalog lookup of the write path as it was until the key claim and the pricing joined the
 * write statement (E variants): one statement before the write, every order.
 */
export async function priceLinesUntilNow(tx: Tx, request: OrderRequest) {
  const products = await tx.$queryRawUnsafe<{ sku: string; currency: string; unit_price_cents: bigint }[]>(
    'select sku, currency, unit_price_cents from products where sku = any($1::text[])',
    request.items.map((item) => item.sku),
  );
  const bySku = new Map(products.map((product) => [product.sku, product]));
  return request.items.map((item) => {
    const product = bySku.get(item.sku);
    if (!product || product.currency !== request.currency) throw new Error(`cannot order ${item.sku}`);
    return { sku: item.sku, quantity: item.quantity, unitPriceCents: BigInt(product.unit_price_cents) };
  });
}

/** E0: the E business write (lookup, then order + items in one statement) without the outbox row. */
export async function businessOneStatementUntilNow(tx: Tx, request: OrderRequest) {
  const order = newOrder(randomUUID(), request, await priceLinesUntilNow(tx, request));
  await tx.$queryRawUnsafe(
    insertOrderUntilNowSql,
    order.id,
    order.customerId,
    order.currency,
    order.totalCents.toString(),
    order.items.map((item) => item.sku),
    order.items.map((item) => item.quantity),
    order.items.map((item) => item.unitPriceCents.toString()),
  );
  return order;
}

/** E1's write statement, as production sent it until now: order, items and outbox row. */
export const insertOrderAndEventUntilNow = `
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

/**
 * E1 / E1K: placeOrder as it was until now: with a key, its claim first (a statement of its own),
 * then the catalog lookup, then order + items + outbox row in one statement.
 */
export async function placeOrderUntilNow(prisma: Prisma, request: OrderRequest, idempotencyKey?: string) {
  return prisma.$transaction(async (tx) => {
    const orderId = randomUUID();
    if (idempotencyKey !== undefined) {
      const claimed = await tx.$queryRawUnsafe<unknown[]>(
        `insert into idempotency_keys (key, request_hash, order_id) values ($1, $2, $3::uuid)
         on conflict (key) do nothing returning key`,
        idempotencyKey,
        requestHash(request),
        orderId,
      );
      if (claimed.length === 0) throw new Error('bench keys are never reused');
    }
    const order = newOrder(orderId, request, await priceLinesUntilNow(tx, request));
    const event = prepareEvent(EVENT_SOURCE, orderCreated(order));
    await tx.$queryRawUnsafe(
      insertOrderAndEventUntilNow,
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
    return order;
  });
}
/**
 * The orders write path as it was until the one-statement write (kept here as the baseline):
 * Prisma `findMany` on products, then `order.create` with nested items and `include: { items: true }`.
 */
export async function createOrderWithPrismaUntilNow(tx: Tx, request: OrderRequest, orderId: string) {
  const products = await tx.product.findMany({ where: { sku: { in: request.items.map((i) => i.sku) } } });
  const bySku = new Map(products.map((product) => [product.sku, product]));
  const lines = request.items.map((item) => {
    const product = bySku.get(item.sku);
    if (!product || product.currency !== request.currency) throw new Error(`cannot order ${item.sku}`);
    return { sku: item.sku, quantity: item.quantity, unitPriceCents: product.unitPriceCents };
  });
  return tx.order.create({
    data: {
      id: orderId,
      customerId: request.customerId,
      currency: request.currency,
      status: 'PENDING',
      totalCents: lines.reduce((sum, line) => sum + line.unitPriceCents * BigInt(line.quantity), 0n),
      items: { create: lines },
    },
    include: { items: true },
  });
}

export const businessAndWriteEventUntilNow = (prisma: Prisma, request: OrderRequest) =>
  prisma.$transaction(async (tx) => {
    const order = await createOrderWithPrismaUntilNow(tx, request, randomUUID());
    await writeEvent(tx, EVENT_SOURCE, orderCreated(order));
    return order;
  });
