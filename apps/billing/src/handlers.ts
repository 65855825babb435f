import {
  type EventEnvelope,
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
} from '@outbox/events';
import type { PreparedHandler } from '@outbox/service/event-consumer';
import { authorizePayment, type PreparedAnswers, prepareAuthorization } from './authorizePayment.ts';
import { BoundedMap } from './boundedMap.ts';
import type { Prisma, Tx } from './db.ts';
import type { PaymentProvider } from './paymentProvider.ts';
import { type PreparedVoids, prepareVoid, voidPayment } from './voidPayment.ts';

/** Events whose provider call is prepared but not yet recorded; bounded, since some never are. */
const PREPARED_IN_FLIGHT = 10_000;

/** Billing's handlers: ORDER_CREATED authorizes, ORDER_CANCELLED voids; the provider is called before the transaction. */
export function billingHandlers(
  prisma: Prisma,
  provider: PaymentProvider,
): Record<string, PreparedHandler<Tx>> {
  const answers: PreparedAnswers = new BoundedMap(PREPARED_IN_FLIGHT);
  const voids: PreparedVoids = new BoundedMap(PREPARED_IN_FLIGHT);
  const created = (event: EventEnvelope) => event as EventEnvelope<OrderCreatedV1>;
  const cancelled = (event: EventEnvelope) => event as EventEnvelope<OrderCancelledV1>;
  return {
    [ORDER_CREATED]: {
      prepare: (event) => prepareAuthorization(prisma, created(event), provider, answers),
      apply: (tx, event) => authorizePayment(tx, created(event), provider, answers.take(event.id)),
    },
    [ORDER_CANCELLED]: {
      prepare: (event) => prepareVoid(prisma, cancelled(event), provider, voids),
      apply: (tx, event) => voidPayment(tx, cancelled(event).data, provider, voids.take(event.id)),
    },
  };
}
