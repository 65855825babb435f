import { type OrderCancelledV1, STOCK_RELEASED, type StockReleasedV1, writeEvent } from '@outbox/events';
import type { Tx } from './db.ts';
import { EVENT_SOURCE, reply } from './reserveStock.ts';

export type ReleaseOutcome = 'RELEASED' | 'NOTHING_HELD' | 'CANCELLED_BEFORE_CREATED';

/**
 * ORDER_CANCELLED: return a reserved order's stock and say so (STOCK_RELEASED), once: only a
 * RESERVED row moves to RELEASED, so a second cancel of the same order (orders re-sends one when a
 * compensation is overdue) releases nothing. Nothing to do for a rejected order.
 *
 * The cancel usually follows its ORDER_CREATED (same topic, same key), but a dead-letter replay
 * can bring the create later. With no reservation yet, the cancel is remembered as a CANCELLED
 * row, and reserveStock refuses the late create.
 */
export async function releaseStock(tx: Tx, cancelled: OrderCancelledV1): Promise<ReleaseOutcome> {
  const remembered = await tx.$queryRaw<unknown[]>`
    insert into reservations (order_id, status, reason)
    values (${cancelled.orderId}::uuid, 'CANCELLED', ${cancelled.reason})
    on conflict (order_id) do nothing
    returning order_id`;
  if (remembered.length > 0) return 'CANCELLED_BEFORE_CREATED';

  const released = await tx.$queryRaw<unknown[]>`
    update reservations set status = 'RELEASED'
     where order_id = ${cancelled.orderId}::uuid and status = 'RESERVED'
    returning order_id`;
  if (released.length === 0) return 'NOTHING_HELD';

  // Stock rows locked in SKU order, as reserveStock locks them, so the two never deadlock.
  await tx.$executeRaw`
    with locked as (
      select s.sku, i.quantity
        from stock s join reservation_items i on i.sku = s.sku
       where i.order_id = ${cancelled.orderId}::uuid
       order by s.sku
         for update of s
    )
    update stock s set available = s.available + l.quantity
      from locked l
     where s.sku = l.sku`;
  const data: StockReleasedV1 = { orderId: cancelled.orderId };
  await writeEvent(tx, EVENT_SOURCE, reply(STOCK_RELEASED, cancelled.orderId, data));
  return 'RELEASED';
}
