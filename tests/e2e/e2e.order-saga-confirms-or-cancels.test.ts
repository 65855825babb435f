// The order saga end to end, through every service, outbox, relay and topic: an order ends
// CONFIRMED when stock is reserved and payment authorized, and CANCELLED, with the other side
// compensated, when either says no.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('saga', sharedKafkaBrokers());
});
afterAll(() => stack?.stop());

type Order = {
  id: string;
  status: string;
  stockStatus: string | null;
  paymentStatus: string | null;
  cancelReason?: string;
  history: { event: string }[];
};

async function placeOrder(customerId: string, items: { sku: string; quantity: number }[]): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Wait until the order is decided and both compensations (if any) have been reported back. */
function settled(id: string, done: (order: Order) => boolean): Promise<Order> {
  return eventually(
    `order ${id} settles`,
    async () => {
      const order = (await (await fetch(`${stack.services.orders.url}/orders/${id}`)).json()) as Order;
      return done(order) ? order : undefined;
    },
    60_000,
  );
}

const stockOf = async (sku: string) =>
  (
    await queryOnce<{ available: number }>(
      stack.databases.inventory.url,
      'select available from stock where sku = $1',
      [sku],
    )
  )[0]?.available;

describe('order saga', () => {
  it('confirms an order when stock is reserved and payment authorized', async () => {
    const id = await placeOrder('alice', [{ sku: 'KB-101', quantity: 2 }]);
    const order = await settled(id, (o) => o.status === 'CONFIRMED');
    expect(order).toMatchObject({ stockStatus: 'RESERVED', paymentStatus: 'AUTHORIZED' });
    expect(order.history.map((entry) => entry.event).sort()).toEqual(
      ['ORDER_CONFIRMED', 'PAYMENT_AUTHORIZED', 'STOCK_RESERVED'].sort(),
    );
  });

  it('cancels an order inventory cannot fill, and voids its payment', async () => {
    const before = await stockOf('MN-303');
    // 21 monitors: more than the 20 in stock, but a total (5,229 EUR) billing authorizes.
    const id = await placeOrder('bob', [{ sku: 'MN-303', quantity: 21 }]);
    const order = await settled(id, (o) => o.status === 'CANCELLED' && o.paymentStatus === 'VOIDED');
    expect(order.stockStatus).toBe('REJECTED');
    expect(order.cancelReason).toContain('insufficient stock for MN-303');
    expect(await stockOf('MN-303')).toBe(before);
    const [payment] = await queryOnce<{ status: string }>(
      stack.databases.billing.url,
      'select status from payments where order_id = $1',
      [id],
    );
    expect(payment?.status).toBe('VOIDED');
  });

  it('cancels an order whose payment is declined, and releases its stock', async () => {
    const before = await stockOf('HD-404');
    const id = await placeOrder('declined-carol', [{ sku: 'HD-404', quantity: 3 }]);
    const order = await settled(id, (o) => o.status === 'CANCELLED' && o.stockStatus === 'RELEASED');
    expect(order.paymentStatus).toBe('DECLINED');
    expect(order.cancelReason).toBe('card declined by issuer');
    expect(await stockOf('HD-404')).toBe(before);
    const [reservation] = await queryOnce<{ status: string }>(
      stack.databases.inventory.url,
      'select status from reservations where order_id = $1',
      [id],
    );
    expect(reservation?.status).toBe('RELEASED');
  });
});
