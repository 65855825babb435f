import { type OrderCancelledV1, stockReleased } from '@outbox/contracts';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import type { Decision } from './reserveStock.ts';

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

// The stock rows are locked already (applyOrderEvents); locked again here, in one statement, in
// SKU order, so the statement is safe on its own too.
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
 * ORDER_CANCELLED, in the consumer's chunk transaction: return a reserved order's stock and
 * answer STOCK_RELEASED, once: only a RESERVED row moves to RELEASED, so a second cancel of the
 * same order (orders re-sends one when a compensation is overdue) releases nothing. Nothing to do
 * for a rejected order. Cancels are the rare path (an order refused by the other side), so each
 * takes a few statements of its own.
 *
 * The cancel usually follows its ORDER_CREATED (same topic, same key), but a dead-letter replay
 * can bring the create later. With no reservation yet, the cancel is remembered as a CANCELLED
 * row, and reserveStocks refuses the late create.
 */
export async function releaseReservation(
  tx: SqlExecutor,
  cancelled: OrderCancelledV1,
): Promise<Decision<ReleaseOutcome>> {
  const remembered = await queryRows(tx, rememberCancel, [cancelled.orderId, cancelled.reason]);
  if (remembered.length > 0) return { outcome: 'CANCELLED_BEFORE_CREATED', replies: [] };

  const released = await queryRows(tx, markReleased, [cancelled.orderId]);
  if (released.length === 0) return { outcome: 'NOTHING_HELD', replies: [] };

  await queryRows(tx, returnStock, [cancelled.orderId]);
  return { outcome: 'RELEASED', replies: [stockReleased({ orderId: cancelled.orderId })] };
}
