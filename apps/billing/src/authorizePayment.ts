import {
  type EventEnvelope,
  type NewEvent,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
  paymentAuthorized,
  paymentDeclined,
} from '@outbox/contracts';
import { EventFailedError } from '@outbox/inbox';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import type { BoundedMap } from './boundedMap.ts';
import type { Authorization, AuthorizationRequest, PaymentProvider } from './paymentProvider.ts';
import { callProvider } from './providerCalls.ts';

export const EVENT_SOURCE = '/billing';

/** Provider answers obtained before the transaction, by event id, for the transaction to record. */
export type PreparedAnswers = BoundedMap<string, Authorization>;

export type Created = EventEnvelope<OrderCreatedV1>;
export type Cancelled = EventEnvelope<OrderCancelledV1>;
/** What billing consumes: an order's ORDER_CREATED and ORDER_CANCELLED, one handler for both. */
export type PaymentEvent = Created | Cancelled;

export function isCreated(event: PaymentEvent): event is Created {
  return event.type === ORDER_CREATED;
}

const knownOrders = `select order_id::text from payments where order_id = any($1::uuid[])`;

/**
 * The ORDER_CREATED events of a chunk, before the transaction: ask the provider for every order of the chunk billing
 * does not know yet, holding no connection and no lock, a few calls at a time, and keep the
 * answers for the transaction (applyPayments). The event id is the provider's idempotency key, so
 * a retry of an event (the transaction failed, the process died) gets the same answer, never a
 * second charge. An order billing already knows (decided, or cancelled first) costs no call; one
 * query finds them all. The earliest failing event is named (EventFailedError).
 */
export async function prepareAuthorizations(
  db: SqlExecutor,
  events: PaymentEvent[],
  provider: PaymentProvider,
  prepared: PreparedAnswers,
): Promise<void> {
  const created = events.filter(isCreated);
  if (created.length === 0) return;
  const known = new Set(
    (
      await queryRows<{ order_id: string }>(db, knownOrders, [created.map((event) => event.data.orderId)])
    ).map((row) => row.order_id),
  );
  const failures = await callProvider(events, async (event) => {
    if (!isCreated(event) || known.has(event.data.orderId)) return;
    prepared.set(event.id, await provider.authorize(requestOf(event)));
  });
  const [first] = failures;
  if (first) throw new EventFailedError(first.index, first.error);
}

/** The answer to ORDER_CREATED: PAYMENT_AUTHORIZED or PAYMENT_DECLINED. */
export function authorizationReply(event: Created, answer: Authorization): NewEvent {
  const order = event.data;
  if (answer.outcome === 'AUTHORIZED') {
    return paymentAuthorized({
      orderId: order.orderId,
      authorizationId: answer.authorizationId,
      amountCents: order.totalCents,
      currency: order.currency,
    });
  }
  return paymentDeclined({ orderId: order.orderId, reason: answer.reason });
}

export function requestOf(event: Created): AuthorizationRequest {
  return {
    idempotencyKey: event.id,
    customerId: event.data.customerId,
    amountCents: BigInt(event.data.totalCents),
    currency: event.data.currency,
  };
}
