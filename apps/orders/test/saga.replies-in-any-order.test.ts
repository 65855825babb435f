// The order saga's decision does not depend on the order replies arrive in, nor on how often
// each arrives: every permutation of an order's replies, with duplicates, ends in the same state
// with the same single decision event. Real database, the real reply handlers, through applyOnce.
import { randomUUID } from 'node:crypto';
import {
  type EventEnvelope,
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
} from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverReply } from './support/deliverReply.ts';
import { type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_saga');
});
afterAll(() => api?.close());

const replyData: Record<string, (orderId: string) => unknown> = {
  [STOCK_RESERVED]: (orderId) => ({ orderId, items: [{ sku: 'KB-101', quantity: 1 }] }),
  [STOCK_REJECTED]: (orderId) => ({ orderId, reason: 'insufficient stock for KB-101', sku: 'KB-101' }),
  [STOCK_RELEASED]: (orderId) => ({ orderId }),
  [PAYMENT_AUTHORIZED]: (orderId) => ({
    orderId,
    authorizationId: 'auth_1',
    amountCents: '8900',
    currency: 'EUR',
  }),
  [PAYMENT_DECLINED]: (orderId) => ({ orderId, reason: 'card declined by issuer' }),
  [PAYMENT_VOIDED]: (orderId) => ({ orderId, authorizationId: 'auth_1' }),
};

function reply(type: string, orderId: string): EventEnvelope {
  return {
    id: randomUUID(),
    source: type.startsWith('STOCK') ? '/inventory' : '/billing',
    type,
    specversion: '1.0',
    time: new Date().toISOString(),
    subject: orderId,
    aggregatetype: type.startsWith('STOCK') ? 'reservation' : 'payment',
    schemaversion: 1,
    datacontenttype: 'application/json',
    data: replyData[type]?.(orderId),
  };
}

/** Deliver as the consumer does: the handler inside applyOnce, in its own transaction. */
async function deliver(event: EventEnvelope): Promise<string> {
  return (await deliverReply(api.prisma, event)).result;
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

async function newOrder(): Promise<string> {
  const res = await postOrder(api.baseUrl, {
    customerId: 'saga',
    currency: 'EUR',
    items: [{ sku: 'KB-101', quantity: 1 }],
  });
  return ((await res.json()) as { id: string }).id;
}

async function finalState(orderId: string) {
  const [order] = await queryOnce<{ status: string; stock_status: string; payment_status: string }>(
    api.db.url,
    'select status, stock_status, payment_status from orders where id = $1',
    [orderId],
  );
  const decisions = await queryOnce<{ event_type: string }>(
    api.db.url,
    `select event_type from outbox where aggregate_id = $1 and event_type in ('ORDER_CONFIRMED', 'ORDER_CANCELLED')`,
    [orderId],
  );
  return { ...order, decisions: decisions.map((row) => row.event_type) };
}

// Each scenario: the replies one order gets, and where the order must end up, whatever their order.
const scenarios = [
  {
    name: 'stock reserved + payment authorized',
    replies: [STOCK_RESERVED, PAYMENT_AUTHORIZED],
    expected: {
      status: 'CONFIRMED',
      stock_status: 'RESERVED',
      payment_status: 'AUTHORIZED',
      decisions: ['ORDER_CONFIRMED'],
    },
  },
  {
    name: 'stock rejected + payment authorized, then voided',
    replies: [STOCK_REJECTED, PAYMENT_AUTHORIZED],
    after: [PAYMENT_VOIDED],
    expected: {
      status: 'CANCELLED',
      stock_status: 'REJECTED',
      payment_status: 'VOIDED',
      decisions: ['ORDER_CANCELLED'],
    },
  },
  {
    name: 'stock reserved + payment declined, then released',
    replies: [STOCK_RESERVED, PAYMENT_DECLINED],
    after: [STOCK_RELEASED],
    expected: {
      status: 'CANCELLED',
      stock_status: 'RELEASED',
      payment_status: 'DECLINED',
      decisions: ['ORDER_CANCELLED'],
    },
  },
  {
    name: 'stock rejected + payment declined',
    replies: [STOCK_REJECTED, PAYMENT_DECLINED],
    expected: {
      status: 'CANCELLED',
      stock_status: 'REJECTED',
      payment_status: 'DECLINED',
      decisions: ['ORDER_CANCELLED'],
    },
  },
];

describe('order saga replies', () => {
  for (const scenario of scenarios) {
    it(`${scenario.name}: same final state in every order, each reply delivered twice`, async () => {
      for (const ordering of permutations(scenario.replies)) {
        const orderId = await newOrder();
        for (const type of [...ordering, ...(scenario.after ?? [])]) {
          const event = reply(type, orderId);
          expect(await deliver(event)).toBe('applied');
          // The broker redelivers it: nothing changes.
          expect(await deliver(event)).toBe('duplicate');
        }
        expect(await finalState(orderId), `replies in order ${ordering.join(' → ')}`).toEqual(
          scenario.expected,
        );
      }
    });
  }

  it('ignores a reply for an order it does not know', async () => {
    const event = reply(STOCK_RESERVED, randomUUID());
    expect(await deliver(event)).toBe('applied');
    const rows = await queryOnce(api.db.url, 'select 1 from orders where id = $1', [event.subject]);
    expect(rows).toEqual([]);
  });
});
