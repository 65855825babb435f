import { randomUUID } from 'node:crypto';
import {
  type EventData,
  type EventOf,
  type EventType,
  ORDER_CANCELLED,
  ORDER_CREATED,
} from '@outbox/contracts';

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

/** An order of `lines` and its cancellation, as orders would publish them. */
export function orderEvents(lines: { sku: string; quantity: number }[], orderId: string = randomUUID()) {
  return {
    orderId,
    created: envelope(ORDER_CREATED, {
      orderId,
      customerId: 'alice',
      currency: 'EUR',
      totalCents: String(lines.length * 100),
      items: lines.map((line) => ({ ...line, unitPriceCents: '100' })),
    }),
    cancelled: envelope(ORDER_CANCELLED, { orderId, reason: 'payment declined' }),
  };
}
