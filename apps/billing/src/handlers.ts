import {
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
} from '@outbox/contracts';
import type { BatchHandler } from '@outbox/inbox';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { applyPayments, type Prepared } from './applyPayments.ts';
import { type PaymentEvent, prepareAuthorizations } from './authorizePayment.ts';
import { BoundedMap } from './boundedMap.ts';
import type { PaymentProvider } from './paymentProvider.ts';
import { prepareVoids } from './voidPayment.ts';

/** Events whose provider call is prepared but not yet recorded; bounded, since some never are. */
const PREPARED_IN_FLIGHT = 10_000;

export type BillingHandler = BatchHandler<SqlExecutor, OrderCreatedV1 | OrderCancelledV1>;
export type BillingHandlers = { [ORDER_CREATED]: BillingHandler; [ORDER_CANCELLED]: BillingHandler };

/**
 * Billing's handler, ONE for ORDER_CREATED (authorize) and ORDER_CANCELLED (void): the consumer
 * hands one handler's consecutive events to it as one run, so a chunk's creates and cancels are
 * applied together (applyPayments) and the provider calls of the whole chunk run a few at a time,
 * never one after the other inside the transaction. The calls it can make before the transaction
 * it makes there; `db` runs the lookups of that step.
 */
export function billingHandlers(db: SqlExecutor, provider: PaymentProvider): BillingHandlers {
  const prepared: Prepared = {
    answers: new BoundedMap(PREPARED_IN_FLIGHT),
    voids: new BoundedMap(PREPARED_IN_FLIGHT),
  };
  const handler: BillingHandler = {
    prepareAll: async (events) => {
      const payments = events as PaymentEvent[];
      await Promise.all([
        prepareAuthorizations(db, payments, provider, prepared.answers),
        prepareVoids(db, payments, provider, prepared.voids),
      ]);
    },
    applyAll: (tx, events) => applyPayments(tx, events as PaymentEvent[], provider, prepared),
  };
  return { [ORDER_CREATED]: handler, [ORDER_CANCELLED]: handler };
}
