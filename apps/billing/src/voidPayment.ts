import { type OrderCancelledV1, PAYMENT_VOIDED, type PaymentVoidedV1, writeEvent } from '@outbox/events';
import { EVENT_SOURCE, reply } from './authorizePayment.ts';
import type { Tx } from './db.ts';
import type { PaymentProvider } from './paymentProvider.ts';

/**
 * ORDER_CANCELLED: void the order's authorization, if there is one, and say so (PAYMENT_VOIDED).
 * ORDER_CANCELLED always arrives after the order's ORDER_CREATED (same topic and key), so the
 * payment row exists by then.
 */
export async function voidPayment(
  tx: Tx,
  cancelled: OrderCancelledV1,
  provider: PaymentProvider,
): Promise<'VOIDED' | 'NOTHING_HELD'> {
  const payment = await tx.payment.findUnique({ where: { orderId: cancelled.orderId } });
  if (payment?.status !== 'AUTHORIZED' || !payment.authorizationId) return 'NOTHING_HELD';
  await provider.void(payment.authorizationId);
  await tx.payment.update({ where: { orderId: cancelled.orderId }, data: { status: 'VOIDED' } });
  const data: PaymentVoidedV1 = { orderId: cancelled.orderId, authorizationId: payment.authorizationId };
  await writeEvent(tx, EVENT_SOURCE, reply(PAYMENT_VOIDED, cancelled.orderId, data));
  return 'VOIDED';
}
