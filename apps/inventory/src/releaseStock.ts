import { type OrderCancelledV1, stockReleased } from '@outbox/contracts';
import { writeEvent } from '@outbox/outbox';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import { EVENT_SOURCE } from './reserveStock.ts';

export type ReleaseOutcome = 'RELEASED' | 'NOTHING_HELD' | 'CANCELLED_BEFORE_CREATED';

const rememberCancel = `
  insert into reservations (order_id, status, reason)
  values ($1::uuid, 'CANCELLED', $2)
  on conflict (order_id) do nothing
  returning order_id`;

const markReleased = `
  update reservations set status = 'RELEASED'
   where order_id = $1::uuid and status = 'RESERVED'
  returning order_id`;

// Stock rows locked in SKU order, as reserveStocks locks them, so the two never deadlock.
const returnStock = `
  with locked as (
    select s.sku, i.quantity
      from stock s join reservation_items i on i.sku = s.sku
     where i.order_id = $1::uuid
     order by s.sku
       for update of s
  )
  update stock s set available = s.available + l.quantity
    from locked l
   where s.sku = l.sku`;

/**
 * ORDER_CANCELLED: return a reserved order's stock and say so (STOCK_RELEASED), once: only a
 * RESERVED row moves to RELEASED, so a second cancel of the same order (orders re-sends one when a
 * compensation is overdue) releases nothing. Nothing to do for a rejected order. Cancels are the
 * rare path (an order refused by the other side), so they are applied one at a time.
 *
 * The cancel usually follows its ORDER_CREATED (same topic, same key), but a dead-letter replay
 * can bring the create later. With no reservation yet, the cancel is remembered as a CANCELLED
 * row, and reserveStocks refuses the late create.
 */
export async function releaseStock(tx: SqlExecutor, cancelled: OrderCancelledV1): Promise<ReleaseOutcome> {
  const remembered = await queryRows(tx, rememberCancel, [cancelled.orderId, cancelled.reason]);
  if (remembered.length > 0) return 'CANCELLED_BEFORE_CREATED';

  const released = await queryRows(tx, markReleased, [cancelled.orderId]);
  if (released.length === 0) return 'NOTHING_HELD';

  await queryRows(tx, returnStock, [cancelled.orderId]);
  await writeEvent(tx, EVENT_SOURCE, stockReleased({ orderId: cancelled.orderId }));
  return 'RELEASED';
}
