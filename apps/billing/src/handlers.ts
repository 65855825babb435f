import {
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
} from '@outbox/contracts';
import type { BatchHandler, PreparedHandler } from '@outbox/inbox';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { authorizePayments, type PreparedAnswers, prepareAuthorizations } from './authorizePayment.ts';
import { BoundedMap } from './boundedMap.ts';
import type { PaymentProvider } from './paymentProvider.ts';
import { type PreparedVoids, prepareVoid, voidPayment } from './voidPayment.ts';

/** Events whose provider call is prepared but not yet recorded; bounded, since some never are. */
const PREPARED_IN_FLIGHT = 10_000;

export type BillingHandlers = {
  [ORDER_CREATED]: BatchHandler<SqlExecutor, OrderCreatedV1>;
  [ORDER_CANCELLED]: PreparedHandler<SqlExecutor, OrderCancelledV1>;
};

/**
 * Billing's handlers: ORDER_CREATED authorizes (a chunk's orders together), ORDER_CANCELLED voids;
 * the provider is called before the transaction. `db` runs the lookups of the steps before it.
 */
export function billingHandlers(db: SqlExecutor, provider: PaymentProvider): BillingHandlers {
  const answers: PreparedAnswers = new BoundedMap(PREPARED_IN_FLIGHT);
  const voids: PreparedVoids = new BoundedMap(PREPARED_IN_FLIGHT);
  return {
    [ORDER_CREATED]: {
      prepareAll: (events) => prepareAuthorizations(db, events, provider, answers),
      applyAll: (tx, events) => authorizePayments(tx, events, provider, answers),
    },
    [ORDER_CANCELLED]: {
      prepare: (event) => prepareVoid(db, event, provider, voids),
      apply: (tx, event) => voidPayment(tx, event.data, provider, voids.take(event.id)),
    },
  };
}
