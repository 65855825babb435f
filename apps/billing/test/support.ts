import { randomUUID } from 'node:crypto';
import {
  type EventData,
  type EventOf,
  type EventType,
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCreatedV1,
} from '@outbox/contracts';
import { applyOnce, applyOne } from '@outbox/inbox';
import { EVENT_SOURCE } from '../src/authorizePayment.ts';
import type { BillingHandlers } from '../src/handlers.ts';
import type { Prisma, Tx } from './prisma.ts';

export function envelope<T extends EventType>(type: T, data: EventData<T> & { orderId: string }): EventOf<T> {
  return {
    id: randomUUID(),
    source: '/orders',
    type,
    specversion: '1.0',
    time: new Date().toISOString(),
    subject: data.orderId,
    aggregatetype: 'order',
    schemaversion: 1,
    datacontenttype: 'application/json',
    data,
  };
}

/** An order and its cancellation, as orders would publish them. */
export function orderEvents(customerId = 'alice') {
  const orderId = randomUUID();
  const data: OrderCreatedV1 = {
    orderId,
    customerId,
    currency: 'EUR',
    totalCents: '8900',
    items: [{ sku: 'KB-101', quantity: 1, unitPriceCents: '8900' }],
  };
  return {
    orderId,
    created: envelope(ORDER_CREATED, data),
    cancelled: envelope(ORDER_CANCELLED, { orderId, reason: 'insufficient stock for KB-101' }),
  };
}

/**
 * Deliver as the consumer loop does: the handler's step before the transaction first (when
 * `prepare` is on), outside any transaction, then the handler inside applyOnce (a batch handler
 * with a run of one event, its replies written to the outbox as the loop writes them).
 */
export async function deliver(
  prisma: Prisma,
  handlers: BillingHandlers,
  event: EventOf<typeof ORDER_CREATED> | EventOf<typeof ORDER_CANCELLED>,
  options: { prepare?: boolean } = {},
): Promise<string | undefined> {
  let outcome: string | undefined;
  if (event.type === ORDER_CREATED) {
    const handler = handlers[ORDER_CREATED];
    if (options.prepare !== false) await handler.prepareAll?.([event]);
    await applyOnce<Tx>(
      (work) => prisma.$transaction(work),
      'billing',
      event,
      async (tx) => {
        outcome = await applyOne(tx, EVENT_SOURCE, handler, event);
      },
    );
    return outcome;
  }
  const handler = handlers[ORDER_CANCELLED];
  if (options.prepare !== false) await handler.prepare?.(event);
  await applyOnce<Tx>(
    (work) => prisma.$transaction(work),
    'billing',
    event,
    async (tx) => {
      outcome = await handler.apply(tx, event);
    },
  );
  return outcome;
}
