// An order id spelled in upper case is the same order to PostgreSQL, but the handler keyed its
// sets by the database's lower-case spelling: an upper-case ORDER_CREATED was stored RESERVED with
// no stock taken and no reply, or, after its cancel, answered nothing. The contract
// now lower-cases order ids, so the handler sees one spelling.

import { applyOne } from '@outbox/devstack/testing/apply-once';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';
import { inventoryHandlers } from '../src/handlers.ts';
import { EVENT_SOURCE } from '../src/reserveStock.ts';
import { createPrisma, type Prisma } from './prisma.ts';
import { applyOrderEvent, available as availableIn, orderEvents, stateOf as stateIn } from './support.ts';

useLeakGuard();

let db: TestDatabase;
let prisma: Prisma;
beforeAll(async () => {
  db = await createTestDatabase('inventory_order_id_case');
  await migrate(db.url);
  prisma = createPrisma(db.url);
});
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const available = (sku: string) => availableIn(db.url, sku);
const stateOf = (orderId: string) => stateIn(db.url, orderId);

/** An ORDER_CREATED whose order id is in upper case, applied as the consumer applies it. */
async function deliverShouted(created: ReturnType<typeof orderEvents>['created']) {
  const shouted = { ...created, data: { ...created.data, orderId: created.data.orderId.toUpperCase() } };
  return prisma.$transaction((tx) => applyOne(tx, EVENT_SOURCE, inventoryHandlers.ORDER_CREATED, shouted));
}

describe('inventory, an order id in upper case', () => {
  it('reserves the order and answers STOCK_RESERVED', async () => {
    const before = await available('HD-404');
    const { orderId, created } = orderEvents([{ sku: 'HD-404', quantity: 3 }]);
    expect(await deliverShouted(created)).toBe('RESERVED');
    expect(await available('HD-404')).toBe((before ?? 0) - 3);
    expect(await stateOf(orderId)).toEqual({ status: 'RESERVED', replies: ['STOCK_RESERVED'] });
  });

  it('after its cancel, refuses the create and answers STOCK_REJECTED', async () => {
    const before = await available('HD-404');
    const { orderId, created, cancelled } = orderEvents([{ sku: 'HD-404', quantity: 3 }]);
    expect(await prisma.$transaction((tx) => applyOrderEvent(tx, cancelled))).toBe(
      'CANCELLED_BEFORE_CREATED',
    );
    expect(await deliverShouted(created)).toBe('REFUSED_CANCELLED');
    expect(await available('HD-404')).toBe(before);
    expect(await stateOf(orderId)).toEqual({ status: 'REJECTED', replies: ['STOCK_REJECTED'] });
  });
});
