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

/**
 * ORDER_CREATED: reserve every line of the order or none, and say which through the inventory
 * outbox (STOCK_RESERVED or STOCK_REJECTED), in the consumer's applyOnce transaction.
 * Stock rows are locked in SKU order, so two orders sharing SKUs never deadlock; the check and
 * the decrement happen under those locks, so concurrent orders cannot oversell.
 */
export async function reserveStock(tx: Tx, order: OrderCreatedV1): Promise<'RESERVED' | 'REJECTED'> {
  const lines = [...order.items].sort((a, b) => a.sku.localeCompare(b.sku));
  const skus = lines.map((line) => line.sku);
  const stock = await tx.$queryRaw<{ sku: string; available: number }[]>`
    select sku, available from stock where sku = any(${skus}::text[]) order by sku for update`;
  const available = new Map(stock.map((row) => [row.sku, row.available]));

  const short = lines.find((line) => (available.get(line.sku) ?? 0) < line.quantity);
  if (short) {
    const reason = available.has(short.sku)
      ? `insufficient stock for ${short.sku}: wanted ${short.quantity}, available ${available.get(short.sku)}`
      : `unknown sku ${short.sku}`;
    await tx.reservation.create({ data: { orderId: order.orderId, status: 'REJECTED', reason } });
    const data: StockRejectedV1 = { orderId: order.orderId, reason, sku: short.sku };
    await writeEvent(tx, EVENT_SOURCE, reply(STOCK_REJECTED, order.orderId, data));
    return 'REJECTED';
  }

  for (const line of lines) {
    await tx.stock.update({ where: { sku: line.sku }, data: { available: { decrement: line.quantity } } });
  }
  const items = lines.map((line) => ({ sku: line.sku, quantity: line.quantity }));
  await tx.reservation.create({
    data: { orderId: order.orderId, status: 'RESERVED', items: { create: items } },
  });
  const data: StockReservedV1 = { orderId: order.orderId, items };
  await writeEvent(tx, EVENT_SOURCE, reply(STOCK_RESERVED, order.orderId, data));
  return 'RESERVED';
}

/** Inventory's events are about the order's reservation, keyed by the order id. */
export function reply<T>(type: string, orderId: string, data: T) {
  return { type, schemaVersion: 1, aggregateType: 'reservation', aggregateId: orderId, data };
}
