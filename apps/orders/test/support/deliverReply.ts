import type { EventEnvelope } from '@outbox/contracts';
import { applyOnce, applyOne } from '@outbox/devstack/testing/apply-once';
import type { Prisma, Tx } from '../../src/db.ts';
import { EVENT_SOURCE } from '../../src/orders/createOrder.ts';
import { replyHandler, replyHandlers } from '../../src/saga/replyHandlers.ts';

/**
 * Deliver one reply as the consumer does: its handler inside applyOnce, in its own transaction,
 * as a run of one event whose answering event is written to the outbox the way the loop writes it.
 * Returns what applyOnce says ('applied' or 'duplicate') and the handler's outcome.
 */
export async function deliverReply(prisma: Prisma, event: EventEnvelope) {
  if (!(event.type in replyHandlers)) throw new Error(`no handler for ${event.type}`);
  let outcome: string | undefined;
  const result = await applyOnce<Tx>(
    (work) => prisma.$transaction(work),
    'orders',
    event,
    async (tx) => {
      outcome = await applyOne(tx, EVENT_SOURCE, replyHandler, event);
    },
  );
  return { result, outcome };
}
