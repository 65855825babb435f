// The payment provider is called before the event's transaction: a slow provider holds no
// connection, no transaction and no row lock, and cannot push the transaction past its timeout
// (it used to: the call ran inside, and a provider slower than the transaction timeout failed
// every retry of the event, for ever). The provider's calls time out, and it remembers a bounded
// number of answers.
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';
import { billingHandlers } from '../src/handlers.ts';
import { PaymentProvider, PaymentProviderUnavailable } from '../src/paymentProvider.ts';
import { createPrisma, type Prisma } from './prisma.ts';
import { deliver, orderEvents } from './support.ts';

useLeakGuard();

const TRANSACTION_TIMEOUT_MS = 1_000;
const PROVIDER_LATENCY_MS = 1_500; // slower than a whole transaction may take

let db: TestDatabase;
let prisma: Prisma;
beforeAll(async () => {
  db = await createTestDatabase('billing_slow_provider');
  await migrate(db.url);
  prisma = createPrisma(db.url, {
    DATABASE_CONNECT_TIMEOUT_MS: 1_000,
    DATABASE_STATEMENT_TIMEOUT_MS: 500,
    DATABASE_TRANSACTION_TIMEOUT_MS: TRANSACTION_TIMEOUT_MS,
  });
});
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const slowProvider = () =>
  new PaymentProvider({
    limitCents: 1_000_000n,
    faultRate: 0,
    latencyMs: PROVIDER_LATENCY_MS,
    timeoutMs: 5_000,
  });

/** Sessions of the test database inside a transaction right now (holding its snapshot and locks). */
const openTransactions = async () =>
  (
    await queryOnce<{ n: number }>(
      db.url,
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null`,
    )
  )[0]?.n;

describe('billing with a slow payment provider', () => {
  it('authorizes and voids with the provider slower than the transaction timeout', async () => {
    const handlers = billingHandlers(prisma, slowProvider());
    const { created, cancelled } = orderEvents();
    expect(await deliver(prisma, handlers, created)).toBe('AUTHORIZED');
    expect(await deliver(prisma, handlers, cancelled)).toBe('VOIDED');
  });

  it('holds no transaction open while the provider answers', async () => {
    const handlers = billingHandlers(prisma, slowProvider());
    const { created } = orderEvents();
    const delivered = deliver(prisma, handlers, created);
    await sleep(PROVIDER_LATENCY_MS / 2);
    expect(await openTransactions()).toBe(0);
    expect(await delivered).toBe('AUTHORIZED');
  });

  it('inside the transaction (the old placement) the same provider fails the event every time', async () => {
    const handlers = billingHandlers(prisma, slowProvider());
    const { created } = orderEvents();
    await expect(deliver(prisma, handlers, created, { prepare: false })).rejects.toThrow(/timeout|expired/i);
  });

  it('a provider call without an answer fails within its timeout, as unavailable (the event is retried)', async () => {
    const provider = new PaymentProvider({
      limitCents: 1_000_000n,
      faultRate: 0,
      latencyMs: 60_000,
      timeoutMs: 300,
    });
    const started = Date.now();
    const handlers = billingHandlers(prisma, provider);
    // Pinned on the event (index 0 of the run) that the loop retries.
    const failure = await handlers.ORDER_CREATED.prepareAll?.([orderEvents().created]).catch((err) => err);
    expect(failure).toMatchObject({ index: 0 });
    expect((failure as { cause: unknown }).cause).toBeInstanceOf(PaymentProviderUnavailable);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('the simulated provider remembers a bounded number of keys, and answers a forgotten one the same', async () => {
    const provider = new PaymentProvider({ limitCents: 1_000_000n, faultRate: 0, latencyMs: 0, remember: 5 });
    const request = (key: string) => ({
      idempotencyKey: key,
      customerId: 'a',
      amountCents: 100n,
      currency: 'EUR',
    });
    const first = await provider.authorize(request('key-0'));
    for (let i = 1; i < 50; i += 1) await provider.authorize(request(`key-${i}`));
    expect(provider.remembered).toBe(5);
    expect(await provider.authorize(request('key-0'))).toEqual(first);
  });
});
