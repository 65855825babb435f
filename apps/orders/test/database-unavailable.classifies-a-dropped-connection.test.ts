// The database being away is a 503 (retry; the transaction rolled back), a bug is a 500. Through
// Prisma's driver adapter the same "connection gone" arrives in several shapes; the chaos scenario
// postgres-restart saw the API answer 500 for two of them (a commit on a reset connection, and a
// server still starting up). These tests make the errors for real where they can.

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { DriverAdapterError } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type Prisma } from '../src/db.ts';
import { Prisma as PrismaNamespace } from '../src/generated/prisma/client.ts';
import { isDatabaseUnavailable } from '../src/http/databaseUnavailable.ts';

useLeakGuard();

describe('database unavailable, on a real connection', () => {
  let db: TestDatabase;
  let prisma: Prisma;
  let admin: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase('orders_dropped');
    prisma = createPrisma(db.url);
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await prisma?.$disconnect();
    await db?.drop();
  });

  it('counts the error of a transaction whose connection the server terminated', async () => {
    const failure = await prisma
      .$transaction(async (tx) => {
        const [backend] = await tx.$queryRaw<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await admin.query('select pg_terminate_backend($1)', [backend?.pid]);
        await tx.$queryRaw`select 1`;
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure, 'the transaction should fail').toBeDefined();
    expect(isDatabaseUnavailable(failure)).toBe(true);
  });

  it('does not count a constraint violation on a live connection', async () => {
    await admin.query('create table if not exists t (id int primary key)');
    await admin.query('insert into t values (1) on conflict do nothing');
    const failure = await prisma.$executeRaw`insert into t values (1)`.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeDefined();
    expect(isDatabaseUnavailable(failure)).toBe(false);
  });
});

describe('database unavailable, the shapes logged under a restart', () => {
  const wrapped = (cause: object) =>
    new PrismaNamespace.PrismaClientKnownRequestError('Database error.', {
      code: 'P2039',
      clientVersion: 'test',
      meta: { driverAdapterError: { name: 'DriverAdapterError', cause } },
    });

  it('counts a server starting up (57P03 inside P2039) and a reset connection', () => {
    expect(isDatabaseUnavailable(wrapped({ kind: 'postgres', code: '57P03', severity: 'FATAL' }))).toBe(true);
    expect(isDatabaseUnavailable(new DriverAdapterError({ kind: 'ConnectionClosed' }))).toBe(true);
    expect(isDatabaseUnavailable(new DriverAdapterError({ kind: 'DatabaseNotReachable' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    // node-postgres, when the connection broke between two statements (seen in CI, about one run in two)
    expect(
      isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable')),
    ).toBe(true);
  });

  it('does not count a bug dressed the same way', () => {
    expect(isDatabaseUnavailable(wrapped({ kind: 'postgres', code: '42P01' }))).toBe(false);
    expect(isDatabaseUnavailable(new DriverAdapterError({ kind: 'UniqueConstraintViolation' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('unique'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
  });
});
