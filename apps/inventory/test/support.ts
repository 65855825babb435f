import { randomUUID } from 'node:crypto';
import { type EventOf, ORDER_CANCELLED, ORDER_CREATED } from '@outbox/contracts';
import { applyOne } from '@outbox/devstack/testing/apply-once';
import { orderEnvelope } from '@outbox/devstack/testing/order-envelope';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { inventoryHandlers } from '../src/handlers.ts';
import { EVENT_SOURCE } from '../src/reserveStock.ts';

export const envelope = orderEnvelope;

/**
 * One order event applied by hand in `tx` as the consumer applies it: inventory's handler for a
 * run of one, its reply written to the outbox (applyOne). Its outcome, e.g. `RESERVED`.
 */
export function applyOrderEvent<Tx extends SqlExecutor>(
  tx: Tx,
  event: EventOf<typeof ORDER_CREATED> | EventOf<typeof ORDER_CANCELLED>,
): Promise<string | undefined> {
  return applyOne(tx, EVENT_SOURCE, inventoryHandlers[event.type], event);
}

/** An order of `lines` and its cancellation, as orders would publish them. */
export function orderEvents(lines: { sku: string; quantity: number }[], orderId: string = randomUUID()) {
  return {
    orderId,
    created: envelope(ORDER_CREATED, {
      orderId,
      customerId: 'alice',
      currency: 'EUR',
      totalCents: String(lines.length * 100),
      items: lines.map((line) => ({ ...line, unitPriceCents: '100' })),
    }),
    cancelled: envelope(ORDER_CANCELLED, { orderId, reason: 'payment declined' }),
  };
}

/** Units of `sku` on hand in the database at `url`. */
export async function available(url: string, sku: string): Promise<number | undefined> {
  return (await queryOnce<{ available: number }>(url, 'select available from stock where sku = $1', [sku]))[0]
    ?.available;
}

/** An order's reservation status and the replies inventory wrote for it, in order. */
export async function stateOf(url: string, orderId: string) {
  const [reservation] = await queryOnce<{ status: string }>(
    url,
    'select status from reservations where order_id = $1',
    [orderId],
  );
  const replies = await queryOnce<{ event_type: string }>(
    url,
    'select event_type from outbox where aggregate_id = $1 order by seq',
    [orderId],
  );
  return { status: reservation?.status, replies: replies.map((row) => row.event_type) };
}
