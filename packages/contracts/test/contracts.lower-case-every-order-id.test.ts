// Order ids are compared as the database prints them (lower-case). An upper-case spelling of a
// valid id used to pass the schemas unchanged, and the handlers, keying their maps by the
// database's spelling, then missed the order's own row. Every schema and every
// factory now hands out the lower-case id.
import { randomUUID } from 'node:crypto';
import {
  ORDER_CREATED,
  orderCancelled,
  orderCreated,
  paymentVoided,
  schemaFor,
  stockReleased,
} from '@outbox/contracts';
import { describe, expect, it } from 'vitest';
import { eventSchemas } from '../src/registry.ts';

const lower = randomUUID();
const upper = lower.toUpperCase();

/** Minimal valid data of each registered type, with the order id given. */
function sample(type: string, orderId: string): Record<string, unknown> {
  const samples: Record<string, Record<string, unknown>> = {
    ORDER_CREATED: {
      customerId: 'alice',
      currency: 'EUR',
      totalCents: '8900',
      items: [{ sku: 'KB-101', quantity: 1, unitPriceCents: '8900' }],
    },
    ORDER_CONFIRMED: {},
    ORDER_CANCELLED: { reason: 'no stock' },
    STOCK_RESERVED: { items: [{ sku: 'KB-101', quantity: 1 }] },
    STOCK_REJECTED: { reason: 'no stock' },
    STOCK_RELEASED: {},
    PAYMENT_AUTHORIZED: { authorizationId: 'auth_1', amountCents: '8900', currency: 'EUR' },
    PAYMENT_DECLINED: { reason: 'declined' },
    PAYMENT_VOIDED: { authorizationId: 'auth_1' },
  };
  return { orderId, ...samples[type] };
}

describe('order ids in the contracts', () => {
  it.each(Object.keys(eventSchemas))('%s v1 reads an upper-case order id as the lower-case one', (type) => {
    const schema = schemaFor(type, 1);
    expect(schema?.parse(sample(type, upper))).toMatchObject({ orderId: lower });
  });

  it('the factories key every event by the lower-case id', () => {
    const events = [
      orderCreated(sample(ORDER_CREATED, upper) as Parameters<typeof orderCreated>[0]),
      orderCancelled({ orderId: upper, reason: 'no stock' }),
      stockReleased({ orderId: upper }),
      paymentVoided({ orderId: upper, authorizationId: 'auth_1' }),
    ];
    for (const event of events) expect(event.aggregateId).toBe(lower);
  });

  it('still refuse an order id that is not a UUID', () => {
    expect(schemaFor('STOCK_RELEASED', 1)?.safeParse({ orderId: 'order-1' }).success).toBe(false);
  });
});
