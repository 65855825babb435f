import {
  type EventEnvelope,
  type OrderCreatedV1,
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  type PaymentAuthorizedV1,
  type PaymentDeclinedV1,
  writeEvent,
} from '@outbox/events';
import type { BoundedMap } from './boundedMap.ts';
import type { Prisma, Tx } from './db.ts';
import type { Authorization, PaymentProvider } from './paymentProvider.ts';

export const EVENT_SOURCE = '/billing';

export type AuthorizeOutcome = 'AUTHORIZED' | 'DECLINED' | 'REFUSED_CANCELLED' | 'ALREADY_DECIDED';

/** Provider answers obtained before the transaction, by event id, for the transaction to record. */
export type PreparedAnswers = BoundedMap<string, Authorization>;

/**
 * ORDER_CREATED, before the transaction: ask the provider, holding no connection and no lock, and
 * keep its answer for the transaction below. The event id is the provider's idempotency key, so a
 * retry of this event (the transaction failed, the process died) gets the same answer, never a
 * second charge. An order billing already knows (decided, or cancelled first) costs no call.
 */
export async function prepareAuthorization(
  prisma: Prisma,
  event: EventEnvelope<OrderCreatedV1>,
  provider: PaymentProvider,
  prepared: PreparedAnswers,
): Promise<void> {
  const known = await prisma.payment.findUnique({
    where: { orderId: event.data.orderId },
    select: { status: true },
  });
  if (known) return;
  prepared.set(event.id, await provider.authorize(requestOf(event)));
}

/**
 * ORDER_CREATED, in the consumer's applyOnce transaction: record the provider's answer and reply
 * (PAYMENT_AUTHORIZED or PAYMENT_DECLINED) through the billing outbox. `prepared` is the answer
 * prepareAuthorization got; without one (a consumer that does not run the step before the
 * transaction) the provider is asked here, bounded by its timeout, with the same idempotency key.
 *
 * If the order's ORDER_CANCELLED got here first (a replayed ORDER_CREATED), its CANCELLED row is
 * found and the order is declined without an authorization that nothing would ever void.
 */
export async function authorizePayment(
  tx: Tx,
  event: EventEnvelope<OrderCreatedV1>,
  provider: PaymentProvider,
  prepared?: Authorization,
): Promise<AuthorizeOutcome> {
  const order = event.data;
  const [existing] = await tx.$queryRaw<{ status: string }[]>`
    select status from payments where order_id = ${order.orderId}::uuid for update`;
  if (existing) {
    if (existing.status !== 'CANCELLED') return 'ALREADY_DECIDED';
    // Only if the cancel slipped in between the step before the transaction and this one.
    if (prepared?.outcome === 'AUTHORIZED') await provider.void(prepared.authorizationId);
    await record(tx, event, {
      outcome: 'DECLINED',
      reason: 'order was cancelled before billing received it',
    });
    return 'REFUSED_CANCELLED';
  }
  const answer = prepared ?? (await provider.authorize(requestOf(event)));
  await record(tx, event, answer);
  return answer.outcome;
}

async function record(tx: Tx, event: EventEnvelope<OrderCreatedV1>, answer: Authorization): Promise<void> {
  const order = event.data;
  const authorizationId = answer.outcome === 'AUTHORIZED' ? answer.authorizationId : null;
  const declineReason = answer.outcome === 'DECLINED' ? answer.reason : null;
  // Over the order's CANCELLED row, if it has one; anything else there is a concurrent decision,
  // and this transaction fails (and is retried, then finds it).
  const written = await tx.$queryRaw<unknown[]>`
    insert into payments (order_id, event_id, customer_id, currency, amount_cents, status, authorization_id, decline_reason)
    values (${order.orderId}::uuid, ${event.id}::uuid, ${order.customerId}, ${order.currency},
            ${order.totalCents}::bigint, ${answer.outcome}, ${authorizationId}, ${declineReason})
    on conflict (order_id) do update
      set event_id = excluded.event_id, customer_id = excluded.customer_id, currency = excluded.currency,
          amount_cents = excluded.amount_cents, status = excluded.status,
          authorization_id = excluded.authorization_id, decline_reason = excluded.decline_reason
      where payments.status = 'CANCELLED'
    returning order_id`;
  if (written.length === 0) throw new Error(`payment of order ${order.orderId} was decided concurrently`);
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
}

function requestOf(event: EventEnvelope<OrderCreatedV1>) {
  return {
    idempotencyKey: event.id,
    customerId: event.data.customerId,
    amountCents: BigInt(event.data.totalCents),
    currency: event.data.currency,
  };
}

/** Billing's events are about the order's payment, keyed by the order id. */
export function reply<T>(type: string, orderId: string, data: T) {
  return { type, schemaVersion: 1, aggregateType: 'payment', aggregateId: orderId, data };
}
