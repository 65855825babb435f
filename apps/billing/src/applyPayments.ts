import { paymentVoided } from '@outbox/contracts';
import type { Applied } from '@outbox/inbox';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import {
  authorizationReply,
  type Created,
  isCreated,
  type PaymentEvent,
  type PreparedAnswers,
  requestOf,
} from './authorizePayment.ts';
import type { Authorization, PaymentProvider } from './paymentProvider.ts';
import { callProvider } from './providerCalls.ts';
import type { PreparedVoids } from './voidPayment.ts';

export type PaymentOutcome =
  | 'AUTHORIZED'
  | 'DECLINED'
  | 'REFUSED_CANCELLED'
  | 'ALREADY_DECIDED'
  | 'VOIDED'
  | 'NOTHING_HELD'
  | 'CANCELLED_BEFORE_CREATED';

/** What the steps before the transaction left for it (prepareAuthorizations, prepareVoids). */
export type Prepared = { answers: PreparedAnswers; voids: PreparedVoids };

/** A payments row as the run reads and writes it. */
type Payment = {
  event_id: string | null;
  customer_id: string | null;
  currency: string | null;
  amount_cents: string | null;
  status: 'AUTHORIZED' | 'DECLINED' | 'VOIDED' | 'CANCELLED';
  authorization_id: string | null;
  decline_reason: string | null;
};

const lockPayments = `
  select order_id::text, event_id::text, customer_id, currency, amount_cents::text, status,
         authorization_id, decline_reason
    from payments where order_id = any($1::uuid[]) for update`;

// Each order's new row, in one statement. The update moves only a row this transaction locked,
// and only from the status it decided on (`seen`): a row another transaction committed meanwhile
// (a cancel's CANCELLED row, for an order seen without a row) is never overwritten; the run fails
// and is retried, and then finds it. A CANCELLED row only ever becomes DECLINED (the late create
// refused, nothing held).
const savePayments = `
  with decided as (
    select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::text[],
                         $7::text[], $8::text[], $9::text[])
      as d (order_id, event_id, customer_id, currency, amount_cents, status, authorization_id,
            decline_reason, seen)
  )
  insert into payments (order_id, event_id, customer_id, currency, amount_cents, status, authorization_id, decline_reason)
  select order_id, event_id, customer_id, currency, amount_cents, status, authorization_id, decline_reason
    from decided
  on conflict (order_id) do update
    set event_id = excluded.event_id, customer_id = excluded.customer_id, currency = excluded.currency,
        amount_cents = excluded.amount_cents, status = excluded.status,
        authorization_id = excluded.authorization_id, decline_reason = excluded.decline_reason
    where payments.status = (select seen from decided where decided.order_id = excluded.order_id)
      and (payments.status <> 'CANCELLED' or excluded.status = 'DECLINED')
  returning order_id`;

const REFUSAL: Authorization = {
  outcome: 'DECLINED',
  reason: 'order was cancelled before billing received it',
};

/**
 * A run of ORDER_CREATED and ORDER_CANCELLED events in offset order, in the consumer's chunk
 * transaction. Load, decide, call, save: the run's payments are locked with one statement, each
 * event decided in memory exactly as if they had come one by one (a create then its cancel:
 * authorized, then voided), the provider calls the steps before the transaction could not make
 * done a few at a time, and the rows written back with one statement.
 *
 * - ORDER_CREATED records the provider's answer and replies PAYMENT_AUTHORIZED or _DECLINED. Its
 *   cancel got here first (a replayed create): declined without an authorization nothing would void.
 * - ORDER_CANCELLED voids an AUTHORIZED payment and replies PAYMENT_VOIDED, once: a second cancel
 *   (orders re-sends one when a compensation is overdue) finds it VOIDED. Before its create, the
 *   cancel is remembered as a CANCELLED row.
 *
 * Every provider call is done before COMMIT and is idempotent, so a run retried after a failure
 * or a crash repeats calls harmlessly, and its effects commit once.
 */
export async function applyPayments(
  tx: SqlExecutor,
  events: PaymentEvent[],
  provider: PaymentProvider,
  prepared: Prepared,
): Promise<Applied[]> {
  const orderIds = [...new Set(events.map((event) => event.data.orderId))];
  const seen = new Map(
    (await queryRows<Payment & { order_id: string }>(tx, lockPayments, [orderIds])).map(
      ({ order_id, ...payment }) => [order_id, payment],
    ),
  );
  await askForMissingAnswers(events, seen, provider, prepared.answers);
  const run = decide(events, seen, prepared);
  const [failed] = await callProvider(run.voids, (authorizationId) => provider.void(authorizationId));
  if (failed) throw failed.error;

  const changed = [...run.payments].filter(([orderId, payment]) => seen.get(orderId) !== payment);
  if (changed.length > 0) {
    const column = <K extends keyof Payment>(key: K) => changed.map(([, payment]) => payment[key]);
    const written = await queryRows(tx, savePayments, [
      changed.map(([orderId]) => orderId),
      column('event_id'),
      column('customer_id'),
      column('currency'),
      column('amount_cents'),
      column('status'),
      column('authorization_id'),
      column('decline_reason'),
      changed.map(([orderId]) => seen.get(orderId)?.status ?? null),
    ]);
    // The answers stay prepared: the retry finds the other transaction's row and needs them.
    if (written.length !== changed.length)
      throw new Error('a payment of this run was decided concurrently; the run is retried');
  }
  for (const event of events) (isCreated(event) ? prepared.answers : prepared.voids).delete(event.id);
  return run.applied;
}

/**
 * The provider's answer for every create that will ask for one (its order has no row, and no
 * earlier event of the run is about it) and got none before the transaction: a consumer that does
 * not run that step, or a run retried after it. Asked here, a few at a time, by the same keys.
 */
async function askForMissingAnswers(
  events: PaymentEvent[],
  seen: Map<string, Payment>,
  provider: PaymentProvider,
  answers: PreparedAnswers,
): Promise<void> {
  const first = new Map<string, PaymentEvent>();
  for (const event of events) if (!first.has(event.data.orderId)) first.set(event.data.orderId, event);
  const asking = [...first.values()].filter(
    (event): event is Created => isCreated(event) && !seen.has(event.data.orderId) && !answers.has(event.id),
  );
  const [failed] = await callProvider(asking, async (event) => {
    answers.set(event.id, await provider.authorize(requestOf(event)));
  });
  if (failed) throw failed.error;
}

/** Each event decided in offset order over the payments as the earlier ones left them. */
function decide(events: PaymentEvent[], seen: Map<string, Payment>, prepared: Prepared) {
  const payments = new Map(seen);
  const voids: string[] = [];
  const applied = events.map((event): Applied & { outcome: PaymentOutcome } => {
    const { orderId } = event.data;
    const current = payments.get(orderId);
    if (isCreated(event)) {
      if (current && current.status !== 'CANCELLED') return { outcome: 'ALREADY_DECIDED' };
      const answer = prepared.answers.get(event.id) as Authorization;
      if (!current) {
        payments.set(orderId, paymentOf(event, answer));
        return { outcome: answer.outcome, replies: [authorizationReply(event, answer)] };
      }
      // An authorization asked for before the cancel was recorded (a replay overtaken by it).
      if (answer?.outcome === 'AUTHORIZED') voids.push(answer.authorizationId);
      payments.set(orderId, paymentOf(event, REFUSAL));
      return { outcome: 'REFUSED_CANCELLED', replies: [authorizationReply(event, REFUSAL)] };
    }
    if (!current) {
      payments.set(orderId, { ...NO_DETAILS, status: 'CANCELLED' });
      return { outcome: 'CANCELLED_BEFORE_CREATED' };
    }
    const authorizationId = current.status === 'AUTHORIZED' ? current.authorization_id : null;
    if (!authorizationId) return { outcome: 'NOTHING_HELD' };
    // Not voided before the transaction when its create is in the same chunk.
    if (prepared.voids.get(event.id) !== authorizationId) voids.push(authorizationId);
    payments.set(orderId, { ...current, status: 'VOIDED' });
    return { outcome: 'VOIDED', replies: [paymentVoided({ orderId, authorizationId })] };
  });
  return { applied, payments, voids };
}

const NO_DETAILS = {
  event_id: null,
  customer_id: null,
  currency: null,
  amount_cents: null,
  authorization_id: null,
  decline_reason: null,
};

function paymentOf(event: Created, answer: Authorization): Payment {
  return {
    event_id: event.id,
    customer_id: event.data.customerId,
    currency: event.data.currency,
    amount_cents: event.data.totalCents,
    status: answer.outcome,
    authorization_id: answer.outcome === 'AUTHORIZED' ? answer.authorizationId : null,
    decline_reason: answer.outcome === 'DECLINED' ? answer.reason : null,
  };
}
