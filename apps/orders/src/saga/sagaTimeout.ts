import { orderCancelled } from '@outbox/contracts';
import { writeEvent } from '@outbox/outbox';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { Prisma, Tx } from '../db.ts';
import { EVENT_SOURCE } from '../orders/createOrder.ts';
import { cancelOrder } from './recordReply.ts';

export type SagaTimeoutOptions = {
  /** An order still PENDING this long after it was placed is cancelled. */
  timeoutMs: number;
  /** Orders handled per transaction; a sweep repeats until it finds fewer. */
  batchSize?: number;
};

export type SweepResult = { timedOut: number; cancelResent: number };

type Overdue = { id: string; stock_status: string | null; payment_status: string | null };

/**
 * One sweep of the saga's timeout, in transactions of `batchSize` orders, each through the same
 * path as a reply (order row locked, decision and its event in one transaction with the outbox):
 *
 * - an order PENDING longer than the timeout is cancelled with ORDER_CANCELLED, so whichever side
 *   granted something gives it back, and a side that answers later is told no (its late
 *   ORDER_CREATED finds the remembered cancel, or the cancel follows it on its partition);
 * - a CANCELLED order whose stock or payment is still held (a grant, and no release or void) longer
 *   than the timeout after the decision gets ORDER_CANCELLED once more, once: for a side that lost
 *   the first one (dead-lettered and never replayed, or applied by a version that forgot it).
 *   Inventory and billing give back a grant at most once, however many cancels they receive.
 *
 * `for update skip locked`: several orders processes sweep without waiting on each other or on a
 * reply being recorded; a row they skip is swept next time.
 */
export async function sweepSagaTimeouts(prisma: Prisma, options: SagaTimeoutOptions): Promise<SweepResult> {
  const batchSize = options.batchSize ?? 100;
  const result: SweepResult = { timedOut: 0, cancelResent: 0 };
  for (;;) {
    const swept = await prisma.$transaction(async (tx) => {
      const timedOut = await cancelOverdue(tx, options.timeoutMs, batchSize);
      const resent = await resendOverdueCancels(tx, options.timeoutMs, batchSize);
      return { timedOut, resent };
    });
    result.timedOut += swept.timedOut;
    result.cancelResent += swept.resent;
    if (swept.timedOut < batchSize && swept.resent < batchSize) return result;
  }
}

async function cancelOverdue(tx: Tx, timeoutMs: number, batchSize: number): Promise<number> {
  const overdue = await tx.$queryRaw<Overdue[]>`
    select id::text, stock_status, payment_status from orders
     where status = 'PENDING' and created_at < now() - make_interval(secs => ${timeoutMs / 1000}::float8)
     order by created_at
     limit ${batchSize}
       for update skip locked`;
  for (const order of overdue) {
    const waitingFor = [
      ...(order.stock_status === null ? ['inventory'] : []),
      ...(order.payment_status === null ? ['billing'] : []),
    ];
    const reason = `saga timed out: no answer from ${waitingFor.join(' and ') || 'all sides'} within ${timeoutMs} ms`;
    await cancelOrder(tx, order.id, reason);
  }
  return overdue.length;
}

async function resendOverdueCancels(tx: Tx, timeoutMs: number, batchSize: number): Promise<number> {
  const overdue = await tx.$queryRaw<{ id: string; cancel_reason: string | null }[]>`
    update orders set cancel_resent_at = now()
     where id in (
       select id from orders
        where status = 'CANCELLED' and (stock_status = 'RESERVED' or payment_status = 'AUTHORIZED')
          and cancel_resent_at is null
          and decided_at < now() - make_interval(secs => ${timeoutMs / 1000}::float8)
        order by decided_at
        limit ${batchSize}
          for update skip locked)
    returning id::text, cancel_reason`;
  for (const order of overdue) {
    const reason = order.cancel_reason ?? 'cancelled';
    await writeEvent(tx, EVENT_SOURCE, orderCancelled({ orderId: order.id, reason }));
    await tx.$executeRaw`
      insert into order_history (order_id, event_type, detail)
      values (${order.id}::uuid, 'ORDER_CANCELLED_RESENT', 'compensation overdue')`;
  }
  return overdue.length;
}

export type SagaTimeout = { stop(): Promise<void> };

/**
 * Sweep every `intervalMs` in the background. A failed sweep (database away) is logged and the
 * next one tries again; stop() waits for a sweep in progress.
 */
export function startSagaTimeout(options: {
  prisma: Prisma;
  logger: Logger;
  timeoutMs: number;
  intervalMs: number;
  /** Where saga_orders_timed_out_total and saga_cancels_resent_total are registered. */
  registry?: MetricsRegistry;
}): SagaTimeout {
  const { prisma, logger, timeoutMs, intervalMs } = options;
  const registers = options.registry ? [options.registry] : [];
  const timedOut = new Counter({
    name: 'saga_orders_timed_out_total',
    help: 'Orders cancelled because they stayed PENDING longer than SAGA_TIMEOUT_MS.',
    registers,
  });
  const resent = new Counter({
    name: 'saga_cancels_resent_total',
    help: 'ORDER_CANCELLED sent again because a release or void was still owed SAGA_TIMEOUT_MS after the cancellation.',
    registers,
  });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> = Promise.resolve();

  const sweep = async () => {
    try {
      const result = await sweepSagaTimeouts(prisma, { timeoutMs });
      timedOut.inc(result.timedOut);
      resent.inc(result.cancelResent);
      if (result.timedOut > 0 || result.cancelResent > 0)
        logger.warn({ ...result, timeoutMs }, 'saga timeout: cancelled overdue orders');
    } catch (err) {
      logger.warn({ err }, 'saga timeout sweep failed; retrying at the next interval');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      sweeping = sweep().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await sweeping;
    },
  };
}
