import {
  type EventData,
  type EventEnvelope,
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
} from '@outbox/contracts';
import type { BatchHandler } from '@outbox/inbox';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { type Reply, recordReplies } from './recordReply.ts';

type Change =
  | { stockStatus: 'RESERVED' | 'REJECTED' | 'RELEASED' }
  | { paymentStatus: 'AUTHORIZED' | 'DECLINED' | 'VOIDED' };

/** What each reply the orders service consumes from inventory and billing says. */
const changes: Record<string, Change> = {
  [STOCK_RESERVED]: { stockStatus: 'RESERVED' },
  [STOCK_REJECTED]: { stockStatus: 'REJECTED' },
  [STOCK_RELEASED]: { stockStatus: 'RELEASED' },
  [PAYMENT_AUTHORIZED]: { paymentStatus: 'AUTHORIZED' },
  [PAYMENT_DECLINED]: { paymentStatus: 'DECLINED' },
  [PAYMENT_VOIDED]: { paymentStatus: 'VOIDED' },
};

type ReplyType =
  | typeof STOCK_RESERVED
  | typeof STOCK_REJECTED
  | typeof STOCK_RELEASED
  | typeof PAYMENT_AUTHORIZED
  | typeof PAYMENT_DECLINED
  | typeof PAYMENT_VOIDED;

/** A reply event as the saga reads it: what it says about the order, plus its reason when it has one. */
function replyOf(event: EventEnvelope<EventData<ReplyType>>): Reply {
  const change = changes[event.type];
  // Only reply types reach this handler (replyHandlers); the check keeps the lookup honest.
  if (!change) throw new Error(`the saga records no ${event.type}`);
  const { orderId } = event.data;
  const reason = 'reason' in event.data ? event.data.reason : undefined;
  return { eventType: event.type, orderId, ...change, ...(reason ? { reason } : {}) };
}

/** One handler for every reply type, so that a chunk's replies are recorded together, whatever their mix. */
export const replyHandler: BatchHandler<SqlExecutor, EventData<ReplyType>> = {
  applyAll: (tx, events) => recordReplies(tx, events.map(replyOf)),
};

/** The replies the orders service consumes from inventory and billing. */
export const replyHandlers: { [T in ReplyType]: typeof replyHandler } = {
  [STOCK_RESERVED]: replyHandler,
  [STOCK_REJECTED]: replyHandler,
  [STOCK_RELEASED]: replyHandler,
  [PAYMENT_AUTHORIZED]: replyHandler,
  [PAYMENT_DECLINED]: replyHandler,
  [PAYMENT_VOIDED]: replyHandler,
};
