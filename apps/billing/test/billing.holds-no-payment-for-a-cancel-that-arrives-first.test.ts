// A dead-letter replay can bring an order's ORDER_CREATED to billing after its ORDER_CANCELLED.
// Both arrival orders must end with no authorization held for the cancelled order and exactly one
// answer to orders; the real handlers, through applyOnce, on a real database.
import { randomUUID } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';
import { billingHandlers } from '../src/handlers.ts';
import { PaymentProvider } from '../src/paymentProvider.ts';
import { createPrisma, type Prisma } from './prisma.ts';
import { deliver, orderEvents, stateOf as stateIn } from './support.ts';

useLeakGuard();

let db: TestDatabase;
let prisma: Prisma;
beforeAll(async () => {
  db = await createTestDatabase('billing_cancel_first');
  await migrate(db.url);
  prisma = createPrisma(db.url);
});
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const newProvider = () => new PaymentProvider({ limitCents: 1_000_000n, faultRate: 0, latencyMs: 0 });

const stateOf = (orderId: string) => stateIn(db.url, orderId);

describe('billing, whatever the arrival order of an order and its cancel', () => {
  for (const prepare of [true, false]) {
    const how = prepare ? 'provider called before the transaction' : 'provider called inside it';
    it(`created then cancelled (${how}): authorizes, then voids once`, async () => {
      const handlers = billingHandlers(prisma, newProvider());
      const { orderId, created, cancelled } = orderEvents();
      expect(await deliver(prisma, handlers, created, { prepare })).toBe('AUTHORIZED');
      expect(await deliver(prisma, handlers, cancelled, { prepare })).toBe('VOIDED');
      // A cancel re-sent later voids nothing more.
      expect(await deliver(prisma, handlers, { ...cancelled, id: randomUUID() }, { prepare })).toBe(
        'NOTHING_HELD',
      );
      expect(await stateOf(orderId)).toEqual({
        status: 'VOIDED',
        replies: ['PAYMENT_AUTHORIZED', 'PAYMENT_VOIDED'],
      });
    });

    it(`cancelled then created, a replayed create (${how}): declined without asking the provider`, async () => {
      const provider = newProvider();
      const handlers = billingHandlers(prisma, provider);
      const { orderId, created, cancelled } = orderEvents();
      expect(await deliver(prisma, handlers, cancelled, { prepare })).toBe('CANCELLED_BEFORE_CREATED');
      expect(await stateOf(orderId)).toEqual({ status: 'CANCELLED', replies: [] });
      expect(await deliver(prisma, handlers, created, { prepare })).toBe('REFUSED_CANCELLED');
      expect(provider.remembered).toBe(0); // no authorization was ever asked for
      expect(await stateOf(orderId)).toEqual({ status: 'DECLINED', replies: ['PAYMENT_DECLINED'] });
      const [row] = await queryOnce<{ event_id: string; amount_cents: string; decline_reason: string }>(
        db.url,
        'select event_id, amount_cents::text, decline_reason from payments where order_id = $1',
        [orderId],
      );
      expect(row).toEqual({
        event_id: created.id,
        amount_cents: '8900',
        decline_reason: 'order was cancelled before billing received it',
      });
    });
  }

  it('an authorization the provider gave just before the cancel was recorded is voided at the provider', async () => {
    const provider = newProvider();
    const handlers = billingHandlers(prisma, provider);
    const { orderId, created, cancelled } = orderEvents();
    // The create's step before the transaction runs, then the cancel overtakes it.
    await handlers.ORDER_CREATED.prepareAll?.([created]);
    expect(await deliver(prisma, handlers, cancelled)).toBe('CANCELLED_BEFORE_CREATED');
    expect(await deliver(prisma, handlers, created, { prepare: false })).toBe('REFUSED_CANCELLED');
    expect(provider.remembered).toBe(2); // the authorization, and its void
    expect(await stateOf(orderId)).toEqual({ status: 'DECLINED', replies: ['PAYMENT_DECLINED'] });
  });
});
