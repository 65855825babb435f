// A dead-letter replay can bring an order's ORDER_CREATED to inventory after its ORDER_CANCELLED.
// Both arrival orders must end with no stock held for the cancelled order and exactly one answer
// to orders; the real handlers, through applyOnce, on a real database.
import { randomUUID } from 'node:crypto';
import { type EventData, type EventOf, ORDER_CANCELLED, ORDER_CREATED } from '@outbox/contracts';
import { applyOnce } from '@outbox/devstack/testing/apply-once';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';
import { createPrisma, type Prisma, type Tx } from './prisma.ts';
import { applyOrderEvent, available as availableIn, envelope, stateOf as stateIn } from './support.ts';

useLeakGuard();

let db: TestDatabase;
let prisma: Prisma;
beforeAll(async () => {
  db = await createTestDatabase('inventory_cancel_first');
  await migrate(db.url);
  prisma = createPrisma(db.url);
});
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

/** Deliver as the consumer does: the handler inside applyOnce, in its own transaction. */
async function deliver(
  event: EventOf<typeof ORDER_CREATED> | EventOf<typeof ORDER_CANCELLED>,
): Promise<string | undefined> {
  let outcome: string | undefined;
  await applyOnce<Tx>(
    (work) => prisma.$transaction(work),
    'inventory',
    event,
    async (tx) => {
      outcome = await applyOrderEvent(tx, event);
    },
  );
  return outcome;
}

const available = (sku: string) => availableIn(db.url, sku);
const stateOf = (orderId: string) => stateIn(db.url, orderId);

function order() {
  const orderId = randomUUID();
  const data: EventData<typeof ORDER_CREATED> = {
    orderId,
    customerId: 'alice',
    currency: 'EUR',
    totalCents: '12800',
    items: [
      { sku: 'MS-202', quantity: 2, unitPriceCents: '2900' },
      { sku: 'KB-101', quantity: 1, unitPriceCents: '8900' },
    ],
  };
  return {
    created: envelope(ORDER_CREATED, data),
    cancelled: envelope(ORDER_CANCELLED, { orderId, reason: 'payment declined' }),
  };
}

describe('inventory, whatever the arrival order of an order and its cancel', () => {
  it('created then cancelled: reserves, then releases every unit', async () => {
    const before = { kb: await available('KB-101'), ms: await available('MS-202') };
    const { created, cancelled } = order();
    expect(await deliver(created)).toBe('RESERVED');
    expect(await available('KB-101')).toBe((before.kb ?? 0) - 1);
    expect(await available('MS-202')).toBe((before.ms ?? 0) - 2);
    expect(await deliver(cancelled)).toBe('RELEASED');
    expect({ kb: await available('KB-101'), ms: await available('MS-202') }).toEqual(before);
    expect(await stateOf(created.subject)).toEqual({
      status: 'RELEASED',
      replies: ['STOCK_RESERVED', 'STOCK_RELEASED'],
    });
  });

  it('cancelled then created (a replayed create): remembers the cancel, refuses the create, holds nothing', async () => {
    const before = { kb: await available('KB-101'), ms: await available('MS-202') };
    const { created, cancelled } = order();
    expect(await deliver(cancelled)).toBe('CANCELLED_BEFORE_CREATED');
    expect(await stateOf(created.subject)).toEqual({ status: 'CANCELLED', replies: [] });
    expect(await deliver(created)).toBe('REFUSED_CANCELLED');
    expect({ kb: await available('KB-101'), ms: await available('MS-202') }).toEqual(before);
    // One answer, so orders records inventory's side; REJECTED, so nothing is left to release.
    expect(await stateOf(created.subject)).toEqual({ status: 'REJECTED', replies: ['STOCK_REJECTED'] });
    // A cancel re-sent later finds nothing to release.
    expect(await deliver({ ...cancelled, id: randomUUID() })).toBe('NOTHING_HELD');
    expect({ kb: await available('KB-101'), ms: await available('MS-202') }).toEqual(before);
  });

  it('a second cancel of a released order releases nothing more', async () => {
    const before = await available('KB-101');
    const { created, cancelled } = order();
    await deliver(created);
    await deliver(cancelled);
    expect(await deliver({ ...cancelled, id: randomUUID() })).toBe('NOTHING_HELD');
    expect(await available('KB-101')).toBe(before);
    expect((await stateOf(created.subject)).replies).toEqual(['STOCK_RESERVED', 'STOCK_RELEASED']);
  });

  it('reserves all lines or none, and says which line was short', async () => {
    await queryOnce(db.url, "update stock set available = 1 where sku = 'MS-202'");
    const before = await available('KB-101');
    const { created } = order();
    expect(await deliver(created)).toBe('REJECTED');
    expect(await available('KB-101')).toBe(before);
    expect(await available('MS-202')).toBe(1);
    const [rejected] = await queryOnce<{ payload: { reason: string; sku: string } }>(
      db.url,
      "select payload from outbox where aggregate_id = $1 and event_type = 'STOCK_REJECTED'",
      [created.subject],
    );
    expect(rejected?.payload).toMatchObject({
      sku: 'MS-202',
      reason: 'insufficient stock for MS-202: wanted 2, available 1',
    });
  });
});
