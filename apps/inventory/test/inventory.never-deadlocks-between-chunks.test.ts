// Two chunks on different partitions, each a cancel and then a new order, applied at the same
// time on two connections. Inventory used to lock stock rows per statement: the cancel's SKU
// first, then the order's SKUs. Chunk 1 held DL-B (its cancel) and waited for DL-A, chunk 2 held
// DL-A and waited for DL-B: SQLSTATE 40P01. Now a chunk locks every stock row it
// touches in its first stock statement, in SKU order, and no round deadlocks.
//
// To provoke the old interleaving on every round, each transaction, once its first statement
// locking stock rows is done, waits until the other one has done the same or is waiting for a
// lock (PostgreSQL says so in pg_stat_activity): a condition, not a sleep.
import { setTimeout as sleep } from 'node:timers/promises';
import { ORDER_CREATED } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { type BatchHandler, checkEventData, recordProcessed, type Transaction } from '@outbox/inbox';
import { writeEvents } from '@outbox/outbox';
import { createPool, transactionOn } from '@outbox/runtime/database';
import { defaultDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import type { PgClientLike } from '@outbox/runtime/sql-executor';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';
import { inventoryHandlers } from '../src/handlers.ts';
import { EVENT_SOURCE } from '../src/reserveStock.ts';
import { orderEvents } from './support.ts';

useLeakGuard();

const ROUNDS = 3;
/** PostgreSQL's error code for a transaction it aborted to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase('inventory_deadlock');
  await migrate(db.url);
  await queryOnce(db.url, `insert into stock (sku, available) values ('DL-A', 1000), ('DL-B', 1000)`);
  pool = createPool(db.url, defaultDatabaseTimeouts);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

type Event = ReturnType<typeof orderEvents>['created'] | ReturnType<typeof orderEvents>['cancelled'];

/**
 * A chunk applied as the consumer's chunk step applies it (packages/inbox/src/applyChunk.ts): in
 * one transaction, the dedup write, then inventory's one handler for creates and cancels over the
 * whole chunk as one run, then its replies to the outbox.
 */
function applyAsTheConsumer(transaction: Transaction<PgClientLike>, events: Event[]) {
  const handler = inventoryHandlers[ORDER_CREATED] as unknown as BatchHandler<PgClientLike, unknown>;
  for (const event of events) expect(inventoryHandlers[event.type]).toBe(handler); // one run
  return transaction(async (tx) => {
    await recordProcessed(tx, 'inventory', events);
    const applied = await handler.applyAll(
      tx,
      events.map((event) => checkEventData(event)),
    );
    await writeEvents(
      tx,
      EVENT_SOURCE,
      applied.flatMap((result) => (result.replies ?? []).map((event) => ({ event }))),
    );
  });
}

/** The SQLSTATE of a database error, also when the consumer wrapped it (EventFailedError). */
function sqlstateOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

const locksStock = (text: string) => /from stock\b[\s\S]*for update/.test(text);

/** Two transactions meeting after their first statement that locks stock rows (see the top). */
function meetAfterFirstStockLock() {
  const arrived = new Set<number>();
  const pids: number[] = [];
  const waitingForALock = async (pid: number) =>
    (
      await queryOnce<{ waiting: boolean }>(
        db.url,
        `select wait_event_type = 'Lock' as waiting from pg_stat_activity where pid = $1`,
        [pid],
      )
    )[0]?.waiting === true;
  const meet = async (pid: number) => {
    arrived.add(pid);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const others = pids.filter((other) => other !== pid);
      if (
        others.length === 1 &&
        (arrived.has(others[0] as number) || (await waitingForALock(others[0] as number)))
      )
        return;
      if (Date.now() > deadline) throw new Error('the other transaction never reached its first stock lock');
      await sleep(10);
    }
  };
  /** A transaction whose client meets the other one after its first stock-locking statement. */
  return <T>(work: (tx: PgClientLike) => Promise<T>) =>
    transactionOn(pool)(async (client) => {
      const [{ pid }] = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows as [
        { pid: number },
      ];
      pids.push(pid);
      let met = false;
      return work({
        query: async (config) => {
          const result = await client.query(config);
          if (!met && locksStock(config.text)) {
            met = true;
            await meet(pid);
          }
          return result;
        },
      });
    });
}

describe('inventory chunks on competing partitions', () => {
  it(`reserve and release at the same time, SKU sets interleaved, without a deadlock in ${ROUNDS} rounds`, {
    timeout: 120_000,
  }, async () => {
    let deadlocks = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      // Reserved before the round: P holds DL-B, Q holds DL-A.
      const p = orderEvents([{ sku: 'DL-B', quantity: 1 }]);
      const q = orderEvents([{ sku: 'DL-A', quantity: 1 }]);
      await applyAsTheConsumer(transactionOn(pool), [p.created, q.created]);
      // Each chunk releases one of them and reserves a new order of both SKUs.
      const n1 = orderEvents([
        { sku: 'DL-A', quantity: 1 },
        { sku: 'DL-B', quantity: 1 },
      ]);
      const n2 = orderEvents([
        { sku: 'DL-A', quantity: 1 },
        { sku: 'DL-B', quantity: 1 },
      ]);
      const meeting = meetAfterFirstStockLock();
      const outcomes = await Promise.allSettled([
        applyAsTheConsumer(meeting, [p.cancelled, n1.created]),
        applyAsTheConsumer(meeting, [q.cancelled, n2.created]),
      ]);
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') continue;
        if (sqlstateOf(outcome.reason) !== DEADLOCK_DETECTED) throw outcome.reason;
        deadlocks += 1;
      }
    }
    expect(deadlocks).toBe(0);
    // Every round: two orders reserved and released, two reserved; 2 units of each SKU per round.
    const stock = await queryOnce<{ sku: string; available: number }>(
      db.url,
      `select sku, available from stock where sku in ('DL-A', 'DL-B') order by sku`,
    );
    expect(stock).toEqual([
      { sku: 'DL-A', available: 1000 - 2 * ROUNDS },
      { sku: 'DL-B', available: 1000 - 2 * ROUNDS },
    ]);
  });
});
