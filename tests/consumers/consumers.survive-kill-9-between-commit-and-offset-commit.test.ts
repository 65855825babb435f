// The worst moment for a consumer to die: its effect transaction has committed, its Kafka offset
// has not. The broker then delivers the event again to the next process, which must recognise it
// (processed_events) and skip it. FAULT_KILL_AFTER_COMMIT=true makes a consumer kill -9 itself at
// exactly that moment, after the first event it applies.
import { readFileSync, statSync } from 'node:fs';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerHealth, getOrder, orderReaches, placeOrder } from './support.ts';

useLeakGuard();

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('kill9consumer', sharedKafkaBrokers());
});
afterAll(() => stack?.stop());

const FAULT = { FAULT_KILL_AFTER_COMMIT: 'true' };

type Name = 'orders' | 'inventory' | 'billing';

/** Where the next process's lines start in a service's log (restarts append to the same file). */
const logSize = (name: Name) => {
  try {
    return statSync(stack.services[name].logFile).size;
  } catch {
    return 0;
  }
};
const logLinesFrom = (name: Name, start: number) =>
  readFileSync(stack.services[name].logFile)
    .subarray(start)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');

/** Restart a service with the fault armed; its pid and where its log lines start. */
async function armFault(name: Name): Promise<{ pid: number; logStart: number }> {
  await stack.services[name].stop();
  const logStart = logSize(name);
  const service = await stack.restart(name, FAULT);
  expect(service.pid).toBeTypeOf('number');
  return { pid: service.pid as number, logStart };
}

/** Wait until the process killed itself, and check it died by SIGKILL rather than shutting down. */
async function diedByKill9(name: Name, { pid, logStart }: { pid: number; logStart: number }): Promise<void> {
  await eventually(
    `${name} (pid ${pid}) is gone`,
    async () => stack.services[name].pid === undefined || undefined,
  );
  // The pid no longer names a process (the test runner reaped its child).
  expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  // No shutdown hook ran (SIGTERM/SIGINT log 'shutting down' first), and nothing failed: it was
  // consuming, then gone. (Its last lines may be lost with it: pino writes asynchronously.)
  const lines = logLinesFrom(name, logStart);
  expect(lines.some((line) => line.includes('"msg":"consuming"'))).toBe(true);
  expect(lines.filter((line) => line.includes('shutting down'))).toEqual([]);
  expect(lines.filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
}

const processedRows = (url: string, eventId: string) =>
  queryOnce<{ consumer: string; event_type: string }>(
    url,
    'select consumer, event_type from processed_events where event_id = $1',
    [eventId],
  );

async function orderCreatedId(orderId: string): Promise<string> {
  const [row] = await queryOnce<{ id: string }>(
    stack.databases.orders.url,
    `select id from outbox where aggregate_id = $1 and event_type = 'ORDER_CREATED'`,
    [orderId],
  );
  expect(row).toBeDefined();
  return row?.id as string;
}

const outboxTypes = async (url: string, orderId: string) =>
  (
    await queryOnce<{ event_type: string }>(
      url,
      'select event_type from outbox where aggregate_id = $1 order by seq',
      [orderId],
    )
  ).map((row) => row.event_type);

const stockOf = async (sku: string) =>
  (
    await queryOnce<{ available: number }>(
      stack.databases.inventory.url,
      'select available from stock where sku = $1',
      [sku],
    )
  )[0]?.available;

// The three consumers crash on the same order, so their restarts overlap: a restarted consumer
// rejoins its group only after the dead member's session times out (30 s), once for all three.
// The tests run in order: the first crashes them, the others check each one after its restart.
const SKU = 'KB-101';
const QUANTITY = 3;
let orderId = '';
let orderCreated = ''; // the ORDER_CREATED event id, on which inventory and billing died
let firstReply = ''; // the reply (STOCK_RESERVED or PAYMENT_AUTHORIZED) on which orders died
let stockBefore = 0;

describe('consumers killed with kill -9 after their commit and before their offset commit', () => {
  it('each dies right after its first effect commits, and that effect is committed', async () => {
    stockBefore = (await stockOf(SKU)) ?? 0;
    const [inventory, billing, orders] = await Promise.all([
      armFault('inventory'),
      armFault('billing'),
      armFault('orders'),
    ]);
    const armed = { inventory, billing, orders };
    orderId = await placeOrder(stack, 'kill9', [{ sku: SKU, quantity: QUANTITY }]);
    await diedByKill9('inventory', armed.inventory);
    await diedByKill9('billing', armed.billing);
    await diedByKill9('orders', armed.orders);
    orderCreated = await orderCreatedId(orderId);

    // Inventory's transaction committed before it died: effect, dedup row and reply, together.
    const [reservation] = await queryOnce<{ status: string }>(
      stack.databases.inventory.url,
      'select status from reservations where order_id = $1',
      [orderId],
    );
    expect(reservation?.status).toBe('RESERVED');
    expect(await stockOf(SKU)).toBe(stockBefore - QUANTITY);
    expect(await processedRows(stack.databases.inventory.url, orderCreated)).toEqual([
      { consumer: `${stack.topicPrefix}inventory`, event_type: 'ORDER_CREATED' },
    ]);
    expect(await outboxTypes(stack.databases.inventory.url, orderId)).toEqual(['STOCK_RESERVED']);

    // So did billing's.
    const [payment] = await queryOnce<{ status: string; event_id: string }>(
      stack.databases.billing.url,
      'select status, event_id from payments where order_id = $1',
      [orderId],
    );
    expect(payment).toEqual({ status: 'AUTHORIZED', event_id: orderCreated });
    expect(await processedRows(stack.databases.billing.url, orderCreated)).toEqual([
      { consumer: `${stack.topicPrefix}billing`, event_type: 'ORDER_CREATED' },
    ]);
    expect(await outboxTypes(stack.databases.billing.url, orderId)).toEqual(['PAYMENT_AUTHORIZED']);

    // And orders', for whichever reply it applied first: recorded, but the order not yet decided.
    const processedByOrders = await queryOnce<{ event_id: string; event_type: string }>(
      stack.databases.orders.url,
      'select event_id, event_type from processed_events',
    );
    expect(processedByOrders).toHaveLength(1);
    const [applied] = processedByOrders;
    firstReply = applied?.event_id ?? '';
    const [recorded] = await queryOnce<{ status: string; stock_status: string; payment_status: string }>(
      stack.databases.orders.url,
      'select status, stock_status, payment_status from orders where id = $1',
      [orderId],
    );
    expect(recorded).toEqual(
      applied?.event_type === 'STOCK_RESERVED'
        ? { status: 'PENDING', stock_status: 'RESERVED', payment_status: null }
        : { status: 'PENDING', stock_status: null, payment_status: 'AUTHORIZED' },
    );

    // Back without the fault.
    await Promise.all([stack.restart('inventory'), stack.restart('billing'), stack.restart('orders')]);
  }, 60_000);

  it('inventory skips the redelivered ORDER_CREATED: one reservation, stock decremented once', async () => {
    // The offset was never committed, so the new process gets ORDER_CREATED again and skips it.
    const health = await eventually(
      'restarted inventory skipped the redelivered ORDER_CREATED',
      async () => {
        const h = await consumerHealth(stack, 'inventory');
        return h.duplicates >= 1 ? h : undefined;
      },
      90_000,
    );
    expect(health).toMatchObject({ applied: 0, duplicates: 1, deadLettered: 0 });
    await orderReaches(stack, orderId, 'CONFIRMED');
    expect(await stockOf(SKU)).toBe(stockBefore - QUANTITY);
    const reservations = await queryOnce<{ status: string }>(
      stack.databases.inventory.url,
      'select status from reservations where order_id = $1',
      [orderId],
    );
    expect(reservations).toEqual([{ status: 'RESERVED' }]);
    expect(await outboxTypes(stack.databases.inventory.url, orderId)).toEqual(['STOCK_RESERVED']);
    expect(await processedRows(stack.databases.inventory.url, orderCreated)).toHaveLength(1);
    expect(await consumerHealth(stack, 'inventory')).toMatchObject({ applied: 0, duplicates: 1 });
  }, 120_000);

  it('billing skips the redelivered ORDER_CREATED: the payment is authorized once', async () => {
    const health = await eventually(
      'restarted billing skipped the redelivered ORDER_CREATED',
      async () => {
        const h = await consumerHealth(stack, 'billing');
        return h.duplicates >= 1 ? h : undefined;
      },
      90_000,
    );
    expect(health).toMatchObject({ applied: 0, duplicates: 1, deadLettered: 0 });
    await orderReaches(stack, orderId, 'CONFIRMED');
    const payments = await queryOnce<{ status: string; event_id: string }>(
      stack.databases.billing.url,
      'select status, event_id from payments where order_id = $1',
      [orderId],
    );
    expect(payments).toEqual([{ status: 'AUTHORIZED', event_id: orderCreated }]);
    expect(await outboxTypes(stack.databases.billing.url, orderId)).toEqual(['PAYMENT_AUTHORIZED']);
    expect(await processedRows(stack.databases.billing.url, orderCreated)).toHaveLength(1);
    expect(await consumerHealth(stack, 'billing')).toMatchObject({ applied: 0, duplicates: 1 });
  }, 120_000);

  it('orders skips the redelivered reply and decides the order once', async () => {
    const order = await orderReaches(stack, orderId, 'CONFIRMED', 90_000);
    expect(order).toMatchObject({ stockStatus: 'RESERVED', paymentStatus: 'AUTHORIZED' });
    // The reply it died on came again after the restart, and was skipped; the other was applied.
    // (Counters, not log lines: the consumer logs no line per event at info.)
    const replies = await eventually(
      'restarted orders handled both replies',
      async () => {
        const health = (await (await fetch(`${stack.services.orders.url}/healthz`)).json()) as {
          replies?: { applied: number; duplicates: number; deadLettered: number };
        };
        const counts = health.replies;
        return counts && counts.applied + counts.duplicates >= 2 ? counts : undefined;
      },
      30_000,
    );
    expect(replies).toMatchObject({ applied: 1, duplicates: 1, deadLettered: 0 });
    // Each reply recorded once, the decision taken once.
    expect(order.history.map((entry) => entry.event).sort()).toEqual(
      ['ORDER_CONFIRMED', 'PAYMENT_AUTHORIZED', 'STOCK_RESERVED'].sort(),
    );
    expect(await processedRows(stack.databases.orders.url, firstReply)).toHaveLength(1);
    const processed = await queryOnce<{ event_type: string }>(
      stack.databases.orders.url,
      'select event_type from processed_events order by event_type',
    );
    expect(processed.map((row) => row.event_type)).toEqual(['PAYMENT_AUTHORIZED', 'STOCK_RESERVED']);
    expect(await outboxTypes(stack.databases.orders.url, orderId)).toEqual([
      'ORDER_CREATED',
      'ORDER_CONFIRMED',
    ]);
    expect((await getOrder(stack, orderId)).status).toBe('CONFIRMED');
  }, 120_000);

  it('inventory killed inside its offset commit interval gets every chunk since its last commit again, and skips each', async () => {
    // Offsets are committed on an interval, not per chunk (docs/design.md, "The consumers"): with
    // one longer than this test, everything applied after the restart is uncommitted when the
    // process dies, several chunks, not one.
    await stack.services.inventory.stop(); // graceful: commits what it applied so far
    await stack.restart('inventory', { KAFKA_COMMIT_INTERVAL_MS: '600000' });
    const before = (await stockOf(SKU)) ?? 0;
    const ids: string[] = [];
    for (const customer of ['interval-1', 'interval-2', 'interval-3']) {
      const id = await placeOrder(stack, customer, [{ sku: SKU, quantity: 1 }]);
      await orderReaches(stack, id, 'CONFIRMED', 90_000); // one after the other: a chunk each
      ids.push(id);
    }
    expect(await consumerHealth(stack, 'inventory')).toMatchObject({ applied: 3, duplicates: 0 });
    await stack.services.inventory.kill();

    await stack.restart('inventory');
    // The three ORDER_CREATED come again (and the ORDER_CONFIRMED, which inventory ignores).
    const health = await eventually(
      'restarted inventory skipped the three redelivered ORDER_CREATED',
      async () => {
        const h = await consumerHealth(stack, 'inventory');
        return h.duplicates >= 3 ? h : undefined;
      },
      90_000,
    );
    expect(health).toMatchObject({ applied: 0, duplicates: 3, deadLettered: 0 });
    expect(await stockOf(SKU)).toBe(before - 3);
    for (const id of ids) {
      const reservations = await queryOnce<{ status: string }>(
        stack.databases.inventory.url,
        'select status from reservations where order_id = $1',
        [id],
      );
      expect(reservations).toEqual([{ status: 'RESERVED' }]);
      expect(await outboxTypes(stack.databases.inventory.url, id)).toEqual(['STOCK_RESERVED']);
    }
  }, 240_000);
});
