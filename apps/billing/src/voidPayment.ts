import { type EventEnvelope, type OrderCancelledV1, paymentVoided } from '@outbox/contracts';
import { writeEvent } from '@outbox/outbox';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import { EVENT_SOURCE } from './authorizePayment.ts';
import type { BoundedMap } from './boundedMap.ts';
import type { PaymentProvider } from './paymentProvider.ts';

export type VoidOutcome = 'VOIDED' | 'NOTHING_HELD' | 'CANCELLED_BEFORE_CREATED';

/** ORDER_CANCELLED events whose authorization the provider already voided, by event id. */
export type PreparedVoids = BoundedMap<string, string>;

/**
 * ORDER_CANCELLED, before the transaction: void the order's authorization at the provider, holding
 * no connection and no lock. Voiding is idempotent, so a retry voids again harmlessly.
 */
export async function prepareVoid(
  db: SqlExecutor,
  event: EventEnvelope<OrderCancelledV1>,
  provider: PaymentProvider,
  prepared: PreparedVoids,
): Promise<void> {
  const [payment] = await queryRows<{ status: string; authorization_id: string | null }>(
    db,
    'select status, authorization_id from payments where order_id = $1::uuid',
    [event.data.orderId],
  );
  if (payment?.status !== 'AUTHORIZED' || !payment.authorization_id) return;
  await provider.void(payment.authorization_id);
  prepared.set(event.id, payment.authorization_id);
}

/**
 * ORDER_CANCELLED, in the consumer's chunk transaction (cancels are the rare path, applied one at a time): mark the order's authorization voided
 * (`preparedVoid`: the authorization prepareVoid already voided at the provider)
 * and say so (PAYMENT_VOIDED), once: only an AUTHORIZED row moves to VOIDED, so a second cancel
 * of the same order (orders re-sends one when a compensation is overdue) voids nothing more.
 *
 * The cancel usually follows its ORDER_CREATED (same topic, same key), but a dead-letter replay
 * can bring the create later. With no payment yet, the cancel is remembered as a CANCELLED row,
 * and authorizePayment declines the late create without asking the provider.
 */
export async function voidPayment(
  tx: SqlExecutor,
  cancelled: OrderCancelledV1,
  provider: PaymentProvider,
  preparedVoid?: string,
): Promise<VoidOutcome> {
  const { orderId } = cancelled;
  const remembered = await queryRows(
    tx,
    `insert into payments (order_id, status) values ($1::uuid, 'CANCELLED')
     on conflict (order_id) do nothing
     returning order_id`,
    [orderId],
  );
  if (remembered.length > 0) return 'CANCELLED_BEFORE_CREATED';

  const [voided] = await queryRows<{ authorization_id: string }>(
    tx,
    `update payments set status = 'VOIDED'
      where order_id = $1::uuid and status = 'AUTHORIZED' and authorization_id is not null
     returning authorization_id`,
    [orderId],
  );
  if (!voided) return 'NOTHING_HELD';
  // Without the step before the transaction, the provider is called here, bounded by its timeout.
  if (preparedVoid !== voided.authorization_id) await provider.void(voided.authorization_id);
  await writeEvent(tx, EVENT_SOURCE, paymentVoided({ orderId, authorizationId: voided.authorization_id }));
  return 'VOIDED';
}
