import {
  type EventEnvelope,
  type NewEvent,
  type OrderCreatedV1,
  paymentAuthorized,
  paymentDeclined,
} from '@outbox/contracts';
import { EventFailedError } from '@outbox/inbox';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import type { BoundedMap } from './boundedMap.ts';
import type { Authorization, PaymentProvider } from './paymentProvider.ts';

export const EVENT_SOURCE = '/billing';

export type AuthorizeOutcome = 'AUTHORIZED' | 'DECLINED' | 'REFUSED_CANCELLED' | 'ALREADY_DECIDED';

/** Provider answers obtained before the transaction, by event id, for the transaction to record. */
export type PreparedAnswers = BoundedMap<string, Authorization>;

type Created = EventEnvelope<OrderCreatedV1>;

const knownOrders = `select order_id::text from payments where order_id = any($1::uuid[])`;

const lockPayments = `
  select order_id::text, status from payments where order_id = any($1::uuid[]) for update`;

// The decisions of a run in one statement, over an order's CANCELLED row if it has one; anything
// else there is a concurrent decision, and the transaction fails (it is retried, then finds it).
const recordPayments = `
  insert into payments (order_id, event_id, customer_id, currency, amount_cents, status, authorization_id, decline_reason)
  select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[])
  on conflict (order_id) do update
    set event_id = excluded.event_id, customer_id = excluded.customer_id, currency = excluded.currency,
        amount_cents = excluded.amount_cents, status = excluded.status,
        authorization_id = excluded.authorization_id, decline_reason = excluded.decline_reason
    where payments.status = 'CANCELLED'
  returning order_id`;

/**
 * ORDER_CREATED, before the transaction: ask the provider for every order of the chunk billing
 * does not know yet, holding no connection and no lock, and keep the answers for the transaction
 * below. The event id is the provider's idempotency key, so a retry of an event (the transaction
 * failed, the process died) gets the same answer, never a second charge. An order billing already
 * knows (decided, or cancelled first) costs no call; one query finds them all.
 */
export async function prepareAuthorizations(
  db: SqlExecutor,
  events: Created[],
  provider: PaymentProvider,
  prepared: PreparedAnswers,
): Promise<void> {
  const known = new Set(
    (await queryRows<{ order_id: string }>(db, knownOrders, [events.map((event) => event.data.orderId)])).map(
      (row) => row.order_id,
    ),
  );
  const calls = events.map(async (event, index) => {
    if (known.has(event.data.orderId)) return;
    try {
      prepared.set(event.id, await provider.authorize(requestOf(event)));
    } catch (err) {
      throw new EventFailedError(index, err);
    }
  });
  const failed = (await Promise.allSettled(calls)).find((result) => result.status === 'rejected');
  if (failed?.status === 'rejected') throw failed.reason;
}

/**
 * ORDER_CREATED, for a run of orders in offset order, in the consumer's chunk transaction: record
 * each provider answer and reply PAYMENT_AUTHORIZED or PAYMENT_DECLINED. `prepared` holds the
 * answers prepareAuthorizations got; without one (a consumer that does not run the step before the
 * transaction) the provider is asked here, bounded by its timeout, with the same idempotency key.
 *
 * If an order's ORDER_CANCELLED got here first (a replayed ORDER_CREATED), its CANCELLED row is
 * found and the order is declined without an authorization that nothing would ever void.
 */
export async function authorizePayments(
  tx: SqlExecutor,
  events: Created[],
  provider: PaymentProvider,
  prepared: PreparedAnswers,
): Promise<{ outcome: AuthorizeOutcome; replies: NewEvent[] }[]> {
  const status = new Map(
    (
      await queryRows<{ order_id: string; status: string }>(tx, lockPayments, [
        events.map((event) => event.data.orderId),
      ])
    ).map((row) => [row.order_id, row.status]),
  );
  const records: { event: Created; answer: Authorization }[] = [];
  const decisions = [];
  for (const event of events) {
    const { orderId } = event.data;
    const answer = prepared.take(event.id);
    const existing = status.get(orderId);
    if (existing !== undefined && existing !== 'CANCELLED') {
      decisions.push({ outcome: 'ALREADY_DECIDED' as const, replies: [] });
      continue;
    }
    if (existing === 'CANCELLED') {
      // Only if the cancel slipped in between the step before the transaction and this one.
      if (answer?.outcome === 'AUTHORIZED') await provider.void(answer.authorizationId);
      const refusal: Authorization = {
        outcome: 'DECLINED',
        reason: 'order was cancelled before billing received it',
      };
      records.push({ event, answer: refusal });
      status.set(orderId, 'DECLINED');
      decisions.push({ outcome: 'REFUSED_CANCELLED' as const, replies: [replyTo(event, refusal)] });
      continue;
    }
    const decided = answer ?? (await provider.authorize(requestOf(event)));
    records.push({ event, answer: decided });
    status.set(orderId, decided.outcome);
    decisions.push({ outcome: decided.outcome, replies: [replyTo(event, decided)] });
  }
  if (records.length > 0) {
    const written = await queryRows(tx, recordPayments, [
      records.map(({ event }) => event.data.orderId),
      records.map(({ event }) => event.id),
      records.map(({ event }) => event.data.customerId),
      records.map(({ event }) => event.data.currency),
      records.map(({ event }) => event.data.totalCents),
      records.map(({ answer }) => answer.outcome),
      records.map(({ answer }) => (answer.outcome === 'AUTHORIZED' ? answer.authorizationId : null)),
      records.map(({ answer }) => (answer.outcome === 'DECLINED' ? answer.reason : null)),
    ]);
    if (written.length !== records.length)
      throw new Error('a payment of this chunk was decided concurrently; the chunk is retried');
  }
  return decisions;
}

function replyTo(event: Created, answer: Authorization): NewEvent {
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

function requestOf(event: Created) {
  return {
    idempotencyKey: event.id,
    customerId: event.data.customerId,
    amountCents: BigInt(event.data.totalCents),
    currency: event.data.currency,
  };
}
