import { randomUUID } from 'node:crypto';
import {
  applyOnce,
  type EventEnvelope,
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCreatedV1,
} from '@outbox/events';
import type { PreparedHandler } from '@outbox/service/event-consumer';
import type { Prisma, Tx } from '../src/db.ts';

export function envelope<T>(type: string, data: T): EventEnvelope<T> {
  return {
    id: randomUUID(),
    source: '/orders',
    type,
    specversion: '1.0',
    time: new Date().toISOString(),
    subject: (data as { orderId: string }).orderId,
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
 * Deliver as the consumer loop does: the handler's `prepare` step first (when `prepare` is on),
 * outside any transaction, then the handler inside applyOnce.
 */
export async function deliver(
  prisma: Prisma,
  handlers: Record<string, PreparedHandler<Tx>>,
  event: EventEnvelope,
  options: { prepare?: boolean } = {},
): Promise<string | undefined> {
  const handler = handlers[event.type];
  if (!handler) throw new Error(`no handler for ${event.type}`);
  if (options.prepare !== false) await handler.prepare?.(event);
  let outcome: string | undefined;
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
