import { randomUUID } from 'node:crypto';
import { type NewEvent, ORDER_CREATED, type OrderCreatedV1, prepareEvent } from '@outbox/events';
import type { Prisma } from '../db.ts';
import { type CreatedOrder, insertOrderWithEvent, newOrder, priceLines } from './createOrder.ts';
import { claimIdempotencyKey, requestHash } from './idempotency.ts';
import type { OrderRequest } from './orderRequest.ts';

export const EVENT_SOURCE = '/orders';

/**
 * The heart of the pattern. The order, its items and its ORDER_CREATED event are written in ONE
 * interactive transaction: if any statement fails, none of them exists; if the commit succeeds,
 * the event is durably queued and the relay will publish it, however long Kafka is away.
 * With an idempotency key, a repeated request returns the order the first one created
 * (`replayed: true`) and writes nothing.
 *
 * The transaction sends BEGIN, the key's claim (with a key), the catalog lookup, ONE statement
 * writing order + items + event (createOrder.ts), COMMIT: the event rides in the business write.
 */
export async function placeOrder(prisma: Prisma, request: OrderRequest, idempotencyKey?: string) {
  return prisma.$transaction(async (tx) => {
    const orderId = randomUUID();
    if (idempotencyKey !== undefined) {
      const earlier = await claimIdempotencyKey(tx, idempotencyKey, requestHash(request), orderId);
      if (earlier) return { order: earlier, replayed: true };
    }
    const order = newOrder(orderId, request, await priceLines(tx, request));
    const stored = await insertOrderWithEvent(tx, order, prepareEvent(EVENT_SOURCE, orderCreated(order)));
    return { order: stored, replayed: false };
  });
}

export function orderCreated(order: CreatedOrder): NewEvent<OrderCreatedV1> {
  return {
    type: ORDER_CREATED,
    schemaVersion: 1,
    aggregateType: 'order',
    aggregateId: order.id,
    data: {
      orderId: order.id,
      customerId: order.customerId,
      currency: order.currency,
      totalCents: order.totalCents.toString(),
      items: order.items.map((item) => ({
        sku: item.sku,
        quantity: item.quantity,
        unitPriceCents: item.unitPriceCents.toString(),
      })),
    },
  };
}
