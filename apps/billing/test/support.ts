import { randomUUID } from 'node:crypto';
import { type EventOf, ORDER_CANCELLED, ORDER_CREATED, type OrderCreatedV1 } from '@outbox/contracts';
import { applyOnce, applyOne } from '@outbox/devstack/testing/apply-once';
import { orderEnvelope } from '@outbox/devstack/testing/order-envelope';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { checkEventData } from '@outbox/inbox';
import { EVENT_SOURCE } from '../src/authorizePayment.ts';
import type { BillingHandlers } from '../src/handlers.ts';
import type { Prisma, Tx } from './prisma.ts';

export const envelope = orderEnvelope;

/** An order and its cancellation, as orders would publish them. */
export function orderEvents(customerId = 'alice') {
  const orderId = randomUUID();
  const data: OrderCreatedV1 = {
    orderId,
    customerId,
    currency: 'EUR',
    totalCents: '8900',
    items: [{ sku: 'KB-101', quantity: 1, unitPriceCents: '8900' }],
  };
  return {
    orderId,
    created: envelope(ORDER_CREATED, data),
    cancelled: envelope(ORDER_CANCELLED, { orderId, reason: 'insufficient stock for KB-101' }),
  };
}

/**
 * Deliver as the consumer loop does: the event's data checked against its contract, the
 * handler's step before the transaction first (when `prepare` is on), outside any transaction,
 * then the handler inside applyOnce (a run of one event, its replies written to the outbox as the
 * loop writes them).
 */
export async function deliver(
  prisma: Prisma,
  handlers: BillingHandlers,
  event: EventOf<typeof ORDER_CREATED> | EventOf<typeof ORDER_CANCELLED>,
  options: { prepare?: boolean } = {},
): Promise<string | undefined> {
  const checked = checkEventData(event) as typeof event;
  const handler = handlers[checked.type];
  if (options.prepare !== false) await handler.prepareAll?.([checked]);
  let outcome: string | undefined;
  await applyOnce<Tx>(
    (work) => prisma.$transaction(work),
    'billing',
    checked,
    async (tx) => {
      outcome = await applyOne(tx, EVENT_SOURCE, handler, checked);
    },
  );
  return outcome;
}

/** An order's payment status and the replies billing wrote for it, in order. */
export async function stateOf(url: string, orderId: string) {
  const [payment] = await queryOnce<{ status: string }>(
    url,
    'select status from payments where order_id = $1',
    [orderId],
  );
  const replies = await queryOnce<{ event_type: string }>(
    url,
    'select event_type from outbox where aggregate_id = $1 order by seq',
    [orderId],
  );
  return { status: payment?.status, replies: replies.map((row) => row.event_type) };
}
