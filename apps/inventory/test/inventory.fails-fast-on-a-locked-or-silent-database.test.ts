// A consumer must fail an event fast, and retry it, when its database does not answer: a row lock
// held by someone else, or a database host that went silent (packets dropped, no RST). Without
// timeouts it waits for ever, holding its partition, while its health says ok.
import { randomUUID } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { ORDER_CREATED, type OrderCreatedV1 } from '@outbox/contracts';
import { freePort } from '@outbox/devstack/ports';
import { applyOnce } from '@outbox/devstack/testing/apply-once';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, type TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';
import { createPrisma, type DatabaseTimeouts, type Prisma, type Tx } from './prisma.ts';
import { applyOrderEvent, envelope } from './support.ts';

useLeakGuard();

const timeouts: DatabaseTimeouts = {
  DATABASE_CONNECT_TIMEOUT_MS: 1_000,
  DATABASE_STATEMENT_TIMEOUT_MS: 1_000,
  DATABASE_TRANSACTION_TIMEOUT_MS: 3_000,
};
// Failing takes up to two client-side query timeouts (the statement, then the rollback): bounded.
// Without the timeouts each of these cases hangs until the test's own 60 s timeout.
const FAST_MS = 8_000;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('inventory_timeouts');
  await migrate(db.url);
});
afterAll(() => db?.drop());

function orderOf(sku: string): OrderCreatedV1 {
  return {
    orderId: randomUUID(),
    customerId: 'alice',
    currency: 'EUR',
    totalCents: '8900',
    items: [{ sku, quantity: 1, unitPriceCents: '8900' }],
  };
}

async function deliver(prisma: Prisma, order: OrderCreatedV1, inside?: () => void): Promise<number> {
  const started = Date.now();
  const created = envelope(ORDER_CREATED, order);
  await applyOnce<Tx>(
    (work) => prisma.$transaction(work),
    'inventory',
    created,
    async (tx) => {
      inside?.();
      await applyOrderEvent(tx, created);
    },
  );
  return Date.now() - started;
}

/** Time until `promise` settles, and how: a hang shows as a timeout of the test itself. */
async function settle(promise: Promise<unknown>): Promise<{ ms: number; error?: string }> {
  const started = Date.now();
  try {
    await promise;
    return { ms: Date.now() - started };
  } catch (err) {
    return { ms: Date.now() - started, error: (err as Error).message };
  }
}

/** A TCP proxy to PostgreSQL that can start swallowing every byte, like a host gone silent. */
async function silenceableProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  let silent = false;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => silent || upstream.write(chunk));
    upstream.on('data', (chunk) => silent || client.write(chunk));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  return {
    port,
    silence: () => {
      silent = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('inventory database timeouts', () => {
  it('a stock row locked by another session: the event fails within the statement timeout', async () => {
    const prisma = createPrisma(db.url, timeouts);
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query("select * from stock where sku = 'KB-101' for update");
      const result = await settle(deliver(prisma, orderOf('KB-101')));
      expect(result.error).toMatch(/statement timeout/);
      expect(result.ms).toBeLessThan(FAST_MS);
      // Once the lock is gone the retried event goes through.
      await locker.query('rollback');
      expect(await deliver(prisma, orderOf('KB-101'))).toBeLessThan(FAST_MS);
    } finally {
      await locker.end();
      await prisma.$disconnect();
    }
  });

  it('a database that goes silent in the middle of a transaction: the event fails, it does not hang', async () => {
    const url = new URL(db.url);
    const proxy = await silenceableProxy(Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    const prisma = createPrisma(url.toString(), timeouts);
    try {
      await deliver(prisma, orderOf('MS-202')); // the pool holds an open connection now
      const result = await settle(deliver(prisma, orderOf('MS-202'), proxy.silence));
      expect(result.error).toBeDefined();
      expect(result.ms).toBeLessThan(FAST_MS);
    } finally {
      await proxy.close();
      await prisma.$disconnect();
    }
  });

  it('a database host that accepts connections and never answers: connecting fails fast', async () => {
    const sockets = new Set<Socket>();
    const blackHole = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    const port = await freePort();
    await new Promise<void>((resolve) => blackHole.listen(port, '127.0.0.1', () => resolve()));
    const prisma = createPrisma(`postgresql://postgres@127.0.0.1:${port}/inventory`, timeouts);
    try {
      const result = await settle(deliver(prisma, orderOf('HD-404')));
      expect(result.error).toBeDefined();
      expect(result.ms).toBeLessThan(FAST_MS);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => blackHole.close(() => resolve()));
      await prisma.$disconnect();
    }
  });
});
