import type { OrderCreatedV1 } from '@outbox/events';
import type { Tx } from './db.ts';

/**
 * Reserve every line of an order or none. Runs inside the consumer's applyOnce transaction.
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
    await tx.reservation.create({
      data: {
        orderId: order.orderId,
        status: 'REJECTED',
        reason: `insufficient stock for ${short.sku}: wanted ${short.quantity}, available ${available.get(short.sku) ?? 0}`,
      },
    });
    return 'REJECTED';
  }

  for (const line of lines) {
    await tx.stock.update({ where: { sku: line.sku }, data: { available: { decrement: line.quantity } } });
  }
  await tx.reservation.create({
    data: {
      orderId: order.orderId,
      status: 'RESERVED',
      items: { create: lines.map((line) => ({ sku: line.sku, quantity: line.quantity })) },
    },
  });
  return 'RESERVED';
}
