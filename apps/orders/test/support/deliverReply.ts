import { applyOnce, type EventEnvelope } from '@outbox/events';
import { applyOne } from '@outbox/service/event-consumer';
import type { Prisma, Tx } from '../../src/db.ts';
import { EVENT_SOURCE } from '../../src/orders/placeOrder.ts';
import { replyHandlers } from '../../src/saga/replyHandlers.ts';

/**
 * Deliver one reply as the consumer does: its handler inside applyOnce, in its own transaction,
 * as a run of one event whose answering event is written to the outbox the way the loop writes it.
 * Returns what applyOnce says ('applied' or 'duplicate') and the handler's outcome.
 */
export async function deliverReply(prisma: Prisma, event: EventEnvelope) {
  const handler = replyHandlers[event.type];
  if (!handler) throw new Error(`no handler for ${event.type}`);
  let outcome: string | undefined;
  const result = await applyOnce<Tx>(
    (work) => prisma.$transaction(work),
    'orders',
    event,
    async (tx) => {
      outcome = await applyOne(tx, EVENT_SOURCE, handler, event);
    },
  );
  return { result, outcome };
}
