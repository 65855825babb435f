import {
  type EventEnvelope,
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
} from '@outbox/events';
import type { EffectHandler } from '@outbox/service/event-consumer';
import { authorizePayment, type PreparedAnswers, prepareAuthorization } from './authorizePayment.ts';
import { BoundedMap } from './boundedMap.ts';
import type { Prisma, Tx } from './db.ts';
import type { PaymentProvider } from './paymentProvider.ts';
import { type PreparedVoids, prepareVoid, voidPayment } from './voidPayment.ts';

/**
 * A handler with an optional step the consumer runs BEFORE opening the event's transaction: a
 * call to a remote system (the payment provider), so that no connection or row lock is held while
 * it answers. It must be idempotent (it runs again when the event is retried or redelivered) and
 * may leave its result for the handler in memory; the handler still works without it.
 */
export type PreparedEffectHandler<Tx> = EffectHandler<Tx> & {
  prepare?: (event: EventEnvelope) => Promise<void>;
};

/** Events whose provider call is prepared but not yet recorded; bounded, since some never are. */
const PREPARED_IN_FLIGHT = 10_000;

/** Billing's handlers: ORDER_CREATED authorizes, ORDER_CANCELLED voids; the provider is called before the transaction. */
export function billingHandlers(
  prisma: Prisma,
  provider: PaymentProvider,
): Record<string, PreparedEffectHandler<Tx>> {
  const answers: PreparedAnswers = new BoundedMap(PREPARED_IN_FLIGHT);
  const voids: PreparedVoids = new BoundedMap(PREPARED_IN_FLIGHT);
  const created = (event: EventEnvelope) => event as EventEnvelope<OrderCreatedV1>;
  const cancelled = (event: EventEnvelope) => event as EventEnvelope<OrderCancelledV1>;
  return {
    [ORDER_CREATED]: Object.assign(
      (tx: Tx, event: EventEnvelope) =>
        authorizePayment(tx, created(event), provider, answers.take(event.id)),
      { prepare: (event: EventEnvelope) => prepareAuthorization(prisma, created(event), provider, answers) },
    ),
    [ORDER_CANCELLED]: Object.assign(
      (tx: Tx, event: EventEnvelope) =>
        voidPayment(tx, cancelled(event).data, provider, voids.take(event.id)),
      { prepare: (event: EventEnvelope) => prepareVoid(prisma, cancelled(event), provider, voids) },
    ),
  };
}
