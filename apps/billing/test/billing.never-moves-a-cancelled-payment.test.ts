// A cancelled payment row (the order's ORDER_CANCELLED came first) may only become DECLINED, when
// its late ORDER_CREATED is refused. It used to become AUTHORIZED: when the create spelled the
// order id in upper case (the handler's maps, keyed by the database's lower-case spelling, missed
// the row), or when the cancel committed between the create's lock and its write.
import { randomUUID } from 'node:crypto';
import { applyOne } from '@outbox/devstack/testing/apply-once';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SOURCE } from '../src/authorizePayment.ts';
import { migrate } from '../src/db.ts';
import { billingHandlers } from '../src/handlers.ts';
import { PaymentProvider } from '../src/paymentProvider.ts';
import { createPrisma, type Prisma, type Tx } from './prisma.ts';
import { deliver, orderEvents, stateOf as stateIn } from './support.ts';

useLeakGuard();

let db: TestDatabase;
let prisma: Prisma;
beforeAll(async () => {
  db = await createTestDatabase('billing_cancelled_row');
  await migrate(db.url);
  prisma = createPrisma(db.url);
});
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

/** The simulated provider, remembering which authorizations it was asked to void. */
class RecordingProvider extends PaymentProvider {
  readonly voided: string[] = [];
  readonly authorized: string[] = [];
  constructor() {
    super({ limitCents: 1_000_000n, faultRate: 0, latencyMs: 0 });
  }
  override async authorize(request: Parameters<PaymentProvider['authorize']>[0]) {
    const answer = await super.authorize(request);
    if (answer.outcome === 'AUTHORIZED') this.authorized.push(answer.authorizationId);
    return answer;
  }
  override async void(authorizationId: string) {
    await super.void(authorizationId);
    this.voided.push(authorizationId);
  }
}

const stateOf = (orderId: string) => stateIn(db.url, orderId);

/** `tx`, except that another connection commits `sql` just before the run writes its payments. */
function racedBeforeSave(tx: Tx, sql: string, values: unknown[]): SqlExecutor {
  let raced = false;
  return {
    $executeRawUnsafe: (query: string, ...rest: unknown[]) => tx.$executeRawUnsafe(query, ...rest),
    $queryRawUnsafe: async <T>(query: string, ...rest: unknown[]) => {
      if (!raced && /insert into payments/.test(query)) {
        raced = true;
        await queryOnce(db.url, sql, values);
      }
      return tx.$queryRawUnsafe<T>(query, ...rest);
    },
  };
}

describe('billing never moves a cancelled payment to AUTHORIZED', () => {
  it('refuses a late create that spells the order id in upper case', async () => {
    const provider = new RecordingProvider();
    const handlers = billingHandlers(prisma, provider);
    const { orderId, created, cancelled } = orderEvents();
    expect(await deliver(prisma, handlers, cancelled)).toBe('CANCELLED_BEFORE_CREATED');
    const shouted = { ...created, data: { ...created.data, orderId: orderId.toUpperCase() } };
    expect(await deliver(prisma, handlers, shouted)).toBe('REFUSED_CANCELLED');
    expect(await stateOf(orderId)).toEqual({ status: 'DECLINED', replies: ['PAYMENT_DECLINED'] });
    expect(provider.authorized).toEqual([]);
  });

  it('answers a second create of a decided order, in upper case, as already decided (not retried for ever)', async () => {
    const handlers = billingHandlers(prisma, new RecordingProvider());
    const { orderId, created } = orderEvents();
    expect(await deliver(prisma, handlers, created)).toBe('AUTHORIZED');
    const again = { ...created, id: randomUUID(), data: { ...created.data, orderId: orderId.toUpperCase() } };
    expect(await deliver(prisma, handlers, again)).toBe('ALREADY_DECIDED');
    expect(await stateOf(orderId)).toEqual({ status: 'AUTHORIZED', replies: ['PAYMENT_AUTHORIZED'] });
  });

  it('leaves a cancel committed between its lock and its write, then refuses the create and voids its authorization', async () => {
    const provider = new RecordingProvider();
    const handlers = billingHandlers(prisma, provider);
    const { orderId, created } = orderEvents();
    await handlers.ORDER_CREATED.prepareAll?.([created]);
    const remember = `insert into payments (order_id, status) values ($1::uuid, 'CANCELLED')`;
    await expect(
      prisma.$transaction((tx) =>
        applyOne(racedBeforeSave(tx, remember, [orderId]), EVENT_SOURCE, handlers.ORDER_CREATED, created),
      ),
    ).rejects.toThrow(/decided concurrently/);
    expect(await stateOf(orderId)).toEqual({ status: 'CANCELLED', replies: [] });

    // The retry finds the cancel, declines, and releases what the provider authorized.
    expect(await deliver(prisma, handlers, created)).toBe('REFUSED_CANCELLED');
    expect(await stateOf(orderId)).toEqual({ status: 'DECLINED', replies: ['PAYMENT_DECLINED'] });
    expect(provider.authorized).toHaveLength(1);
    expect(provider.voided).toEqual(provider.authorized);
  });
});
