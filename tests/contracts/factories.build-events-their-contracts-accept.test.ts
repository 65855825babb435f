import { randomUUID } from 'node:crypto';
import {
  type EventData,
  ORDER_CANCELLED,
  type ORDER_CREATED,
  orderCancelled,
  orderConfirmed,
  orderCreated,
  PAYMENT_AUTHORIZED,
  paymentAuthorized,
  paymentDeclined,
  paymentVoided,
  STOCK_REJECTED,
  STOCK_RESERVED,
  schemaFor,
  stockRejected,
  stockReleased,
  stockReserved,
} from '@outbox/contracts';
import { prepareEvent } from '@outbox/outbox';
import { describe, expect, it } from 'vitest';

const orderId = randomUUID();

describe('event factories', () => {
  it('fill in the type, version and aggregate of their contract, keyed by the order', () => {
    const event = stockReserved({ orderId, items: [{ sku: 'KB-101', quantity: 2 }] });
    expect(event).toEqual({
      type: STOCK_RESERVED,
      schemaVersion: 1,
      aggregateType: 'reservation',
      aggregateId: orderId,
      data: { orderId, items: [{ sku: 'KB-101', quantity: 2 }] },
    });
    expect(orderCancelled({ orderId, reason: 'no stock' })).toMatchObject({
      type: ORDER_CANCELLED,
      aggregateType: 'order',
      aggregateId: orderId,
    });
    expect(
      paymentAuthorized({ orderId, authorizationId: 'auth_1', amountCents: '8900', currency: 'EUR' }),
    ).toMatchObject({ type: PAYMENT_AUTHORIZED, aggregateType: 'payment', aggregateId: orderId });
  });

  it('build events whose data passes the registered schema, so the outbox writer takes them', () => {
    const events = [
      orderCreated({
        orderId,
        customerId: 'alice',
        currency: 'EUR',
        totalCents: '8900',
        items: [{ sku: 'KB-101', quantity: 1, unitPriceCents: '8900' }],
      }),
      orderConfirmed({ orderId }),
      orderCancelled({ orderId, reason: 'payment declined' }),
      stockReserved({ orderId, items: [{ sku: 'KB-101', quantity: 1 }] }),
      stockRejected({ orderId, reason: 'unknown sku XX-1', sku: 'XX-1' }),
      stockReleased({ orderId }),
      paymentAuthorized({ orderId, authorizationId: 'auth_1', amountCents: '8900', currency: 'EUR' }),
      paymentDeclined({ orderId, reason: 'card declined by issuer' }),
      paymentVoided({ orderId, authorizationId: 'auth_1' }),
    ];
    for (const event of events) {
      expect(schemaFor(event.type, event.schemaVersion)?.safeParse(event.data).success).toBe(true);
      expect(JSON.parse(prepareEvent('/test', event).payload)).toEqual(event.data);
    }
  });

  it('refuse data of another contract at compile time', () => {
    // Each line is a type error (tsc fails if one is not); at run time they only build objects.
    // @ts-expect-error: STOCK_REJECTED needs a reason
    stockRejected({ orderId });
    // @ts-expect-error: an ORDER_CANCELLED's data is not an ORDER_CONFIRMED's
    orderConfirmed({ orderId, reason: 'no' });
    // @ts-expect-error: an authorization id is a string
    paymentVoided({ orderId, authorizationId: 1 });
    const created: EventData<typeof ORDER_CREATED> = {
      orderId,
      customerId: 'alice',
      currency: 'EUR',
      totalCents: '100',
      items: [{ sku: 'KB-101', quantity: 1, unitPriceCents: '100' }],
    };
    // @ts-expect-error: a handler of ORDER_CANCELLED gets no ORDER_CREATED data
    const cancelled: EventData<typeof ORDER_CANCELLED> = created;
    expect(cancelled.orderId).toBe(orderId);
    expect(stockRejected({ orderId, reason: 'x' }).type).toBe(STOCK_REJECTED);
  });
});
