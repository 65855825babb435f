import {
  type EventEnvelope,
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  type SqlExecutor,
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
} from '@outbox/events';
import type { BatchHandler } from '@outbox/service/event-consumer';
import { type Reply, recordReplies } from './recordReply.ts';

/** What each reply the orders service consumes from inventory and billing says. */
const changes: Record<
  string,
  | { stockStatus: 'RESERVED' | 'REJECTED' | 'RELEASED' }
  | { paymentStatus: 'AUTHORIZED' | 'DECLINED' | 'VOIDED' }
> = {
  [STOCK_RESERVED]: { stockStatus: 'RESERVED' },
  [STOCK_REJECTED]: { stockStatus: 'REJECTED' },
  [STOCK_RELEASED]: { stockStatus: 'RELEASED' },
  [PAYMENT_AUTHORIZED]: { paymentStatus: 'AUTHORIZED' },
  [PAYMENT_DECLINED]: { paymentStatus: 'DECLINED' },
  [PAYMENT_VOIDED]: { paymentStatus: 'VOIDED' },
};

/** A reply event as the saga reads it: what it says about the order, plus its reason when it has one. */
function replyOf(event: EventEnvelope): Reply {
  const { orderId, reason } = event.data as { orderId: string; reason?: string };
  return { eventType: event.type, orderId, ...changes[event.type], ...(reason ? { reason } : {}) } as Reply;
}

/** One handler for every reply type, so that a chunk's replies are recorded together, whatever their mix. */
const recordAll: BatchHandler<SqlExecutor> = {
  applyAll: (tx, events) => recordReplies(tx, events.map(replyOf)),
};

/** The replies the orders service consumes from inventory and billing. */
export const replyHandlers: Record<string, BatchHandler<SqlExecutor>> = Object.fromEntries(
  Object.keys(changes).map((type) => [type, recordAll]),
);
