// A request that finds no free connection in the API's own pool says "overloaded" (503, retry
// soon), never "the orders database cannot be reached": the database is up, the API is full.
// The error is made for real: a pool of one connection, held by a transaction of the test.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type Prisma } from '../src/db.ts';
import { Prisma as PrismaNamespace } from '../src/generated/prisma/client.ts';
import { isDatabaseUnavailable } from '../src/http/databaseUnavailable.ts';
import { isPoolExhausted } from '../src/http/overload.ts';
import { ordersProblems } from '../src/http/problem.ts';

useLeakGuard();

const toProblem = ordersProblems(pino({ level: 'silent' }), 1);

describe('a pool-acquire timeout, on a real pool of one connection', () => {
  let db: TestDatabase;
  let prisma: Prisma;
  beforeAll(async () => {
    db = await createTestDatabase('orders_pool_exhausted');
    prisma = createPrisma(
      db.url,
      {
        DATABASE_CONNECT_TIMEOUT_MS: 200,
        DATABASE_STATEMENT_TIMEOUT_MS: 5_000,
        DATABASE_TRANSACTION_TIMEOUT_MS: 10_000,
      },
      1,
    );
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  it('is overloaded (503 urn:problem:overloaded with Retry-After), not database unavailable', async () => {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    let holding!: () => void;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const holder = prisma.$transaction(async (tx) => {
      await tx.$queryRaw`select 1`;
      holding();
      await ended;
    });
    await held;
    const failure = await prisma
      .$transaction(async (tx) => tx.$queryRaw`select 1`)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    end();
    await holder;

    expect(failure, 'the second transaction should find no connection').toBeDefined();
    expect(isPoolExhausted(failure)).toBe(true);
    expect(isDatabaseUnavailable(failure)).toBe(false);
    const problem = toProblem(failure);
    expect(problem).toMatchObject({ status: 503, type: 'urn:problem:overloaded' });
    expect(problem?.headers).toEqual({ 'Retry-After': '1' });
  });
});

describe('a pool-acquire timeout, the shapes it comes in', () => {
  it("counts Prisma's P2024 and node-postgres' pool timeout as overloaded", () => {
    const p2024 = new PrismaNamespace.PrismaClientKnownRequestError(
      'Timed out fetching a new connection from the connection pool.',
      { code: 'P2024', clientVersion: 'test' },
    );
    for (const err of [p2024, new Error('timeout exceeded when trying to connect')]) {
      expect(isPoolExhausted(err)).toBe(true);
      expect(isDatabaseUnavailable(err)).toBe(false);
      expect(toProblem(err)?.type).toBe('urn:problem:overloaded');
    }
  });

  it('leaves a connection that could not be opened as database unavailable', () => {
    const err = new Error('Connection terminated due to connection timeout');
    expect(isPoolExhausted(err)).toBe(false);
    expect(toProblem(err)?.type).toBe('urn:problem:database-unavailable');
  });
});
