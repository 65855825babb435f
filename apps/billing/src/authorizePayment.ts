import {
  type EventEnvelope,
  type OrderCreatedV1,
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  type PaymentAuthorizedV1,
  type PaymentDeclinedV1,
  writeEvent,
} from '@outbox/events';
import type { Tx } from './db.ts';
import type { PaymentProvider } from './paymentProvider.ts';

export const EVENT_SOURCE = '/billing';

/**
 * ORDER_CREATED: ask the provider to authorize the order total, record the answer and reply
 * (PAYMENT_AUTHORIZED or PAYMENT_DECLINED) through the billing outbox, all in the consumer's
 * applyOnce transaction. The event id is the provider's idempotency key: if this transaction
 * fails after the provider said yes, the redelivered event gets the same authorization back
 * instead of a second charge. A provider outage throws, and the event is retried later.
 */
export async function authorizePayment(
  tx: Tx,
  event: EventEnvelope<OrderCreatedV1>,
  provider: PaymentProvider,
): Promise<'AUTHORIZED' | 'DECLINED'> {
  const order = event.data;
  const answer = await provider.authorize({
    idempotencyKey: event.id,
    customerId: order.customerId,
    amountCents: BigInt(order.totalCents),
    currency: order.currency,
  });
  await tx.payment.create({
    data: {
      orderId: order.orderId,
      eventId: event.id,
      customerId: order.customerId,
      currency: order.currency,
      amountCents: BigInt(order.totalCents),
      status: answer.outcome,
      authorizationId: answer.outcome === 'AUTHORIZED' ? answer.authorizationId : null,
      declineReason: answer.outcome === 'DECLINED' ? answer.reason : null,
    },
  });
  if (answer.outcome === 'AUTHORIZED') {
    const data: PaymentAuthorizedV1 = {
      orderId: order.orderId,
      authorizationId: answer.authorizationId,
      amountCents: order.totalCents,
      currency: order.currency,
    };
    await writeEvent(tx, EVENT_SOURCE, reply(PAYMENT_AUTHORIZED, order.orderId, data));
  } else {
    const data: PaymentDeclinedV1 = { orderId: order.orderId, reason: answer.reason };
    await writeEvent(tx, EVENT_SOURCE, reply(PAYMENT_DECLINED, order.orderId, data));
  }
  return answer.outcome;
}

/** Billing's events are about the order's payment, keyed by the order id. */
export function reply<T>(type: string, orderId: string, data: T) {
  return { type, schemaVersion: 1, aggregateType: 'payment', aggregateId: orderId, data };
}
