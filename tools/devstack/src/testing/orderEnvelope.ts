import { randomUUID } from 'node:crypto';
import type { EventData, EventOf, EventType } from '@outbox/contracts';

/**
 * An event about an order as the orders service publishes it (source /orders, subject = the
 * order id), for tests that deliver events to a consumer by hand.
 */
export function orderEnvelope<T extends EventType>(
  type: T,
  data: EventData<T> & { orderId: string },
): EventOf<T> {
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
