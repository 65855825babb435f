import {
  type EventEnvelope,
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
  type SqlExecutor,
} from '@outbox/events';
import type { BatchHandler, PreparedHandler } from '@outbox/service/event-consumer';
import { authorizePayments, type PreparedAnswers, prepareAuthorizations } from './authorizePayment.ts';
import { BoundedMap } from './boundedMap.ts';
import type { PaymentProvider } from './paymentProvider.ts';
import { type PreparedVoids, prepareVoid, voidPayment } from './voidPayment.ts';

/** Events whose provider call is prepared but not yet recorded; bounded, since some never are. */
const PREPARED_IN_FLIGHT = 10_000;

export type BillingHandlers = {
  [ORDER_CREATED]: BatchHandler<SqlExecutor>;
  [ORDER_CANCELLED]: PreparedHandler<SqlExecutor>;
};

/**
 * Billing's handlers: ORDER_CREATED authorizes (a chunk's orders together), ORDER_CANCELLED voids;
 * the provider is called before the transaction. `db` runs the lookups of the steps before it.
 */
export function billingHandlers(db: SqlExecutor, provider: PaymentProvider): BillingHandlers {
  const answers: PreparedAnswers = new BoundedMap(PREPARED_IN_FLIGHT);
  const voids: PreparedVoids = new BoundedMap(PREPARED_IN_FLIGHT);
  const created = (events: EventEnvelope[]) => events as EventEnvelope<OrderCreatedV1>[];
  const cancelled = (event: EventEnvelope) => event as EventEnvelope<OrderCancelledV1>;
  return {
    [ORDER_CREATED]: {
      prepareAll: (events) => prepareAuthorizations(db, created(events), provider, answers),
      applyAll: (tx, events) => authorizePayments(tx, created(events), provider, answers),
    },
    [ORDER_CANCELLED]: {
      prepare: (event) => prepareVoid(db, cancelled(event), provider, voids),
      apply: (tx, event) => voidPayment(tx, cancelled(event).data, provider, voids.take(event.id)),
    },
  };
}
