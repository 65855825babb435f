import { type OrderCancelledV1, STOCK_RELEASED, type StockReleasedV1, writeEvent } from '@outbox/events';
import type { Tx } from './db.ts';
import { EVENT_SOURCE, reply } from './reserveStock.ts';

/**
 * ORDER_CANCELLED: return a reserved order's stock and say so (STOCK_RELEASED). Nothing to do
 * for an order whose reservation was rejected. ORDER_CANCELLED always arrives after the order's
 * ORDER_CREATED (same topic, same key, same partition), so the reservation row exists.
 */
export async function releaseStock(
  tx: Tx,
  cancelled: OrderCancelledV1,
): Promise<'RELEASED' | 'NOTHING_HELD'> {
  const reservation = await tx.reservation.findUnique({
    where: { orderId: cancelled.orderId },
    include: { items: { orderBy: { sku: 'asc' } } },
  });
  if (reservation?.status !== 'RESERVED') return 'NOTHING_HELD';

  for (const item of reservation.items) {
    await tx.stock.update({ where: { sku: item.sku }, data: { available: { increment: item.quantity } } });
  }
  await tx.reservation.update({ where: { orderId: cancelled.orderId }, data: { status: 'RELEASED' } });
  const data: StockReleasedV1 = { orderId: cancelled.orderId };
  await writeEvent(tx, EVENT_SOURCE, reply(STOCK_RELEASED, cancelled.orderId, data));
  return 'RELEASED';
}
