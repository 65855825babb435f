import type { EventEnvelope, OrderCreatedV1 } from '@outbox/events';
import type { Tx } from './db.ts';

/**
 * Authorize the order's total. Runs inside the consumer's applyOnce transaction.
 * (The walking skeleton authorizes every order; the payment-provider simulation with declines
 * and injected faults arrives with the saga.)
 */
export async function authorizePayment(tx: Tx, event: EventEnvelope<OrderCreatedV1>): Promise<'AUTHORIZED'> {
  const order = event.data;
  await tx.payment.create({
    data: {
      orderId: order.orderId,
      eventId: event.id,
      customerId: order.customerId,
      currency: order.currency,
      amountCents: BigInt(order.totalCents),
      status: 'AUTHORIZED',
    },
  });
  return 'AUTHORIZED';
}
