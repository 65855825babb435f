import {
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
} from '@outbox/events';
import type { EffectHandler } from '@outbox/service/event-consumer';
import type { Tx } from '../db.ts';
import { type Reply, recordReply } from './recordReply.ts';

type Change =
  | { stockStatus: 'RESERVED' | 'REJECTED' | 'RELEASED' }
  | { paymentStatus: 'AUTHORIZED' | 'DECLINED' | 'VOIDED' };

/** A reply's handler: what the reply says about the order, plus its reason when it has one. */
function recording(change: Change): EffectHandler<Tx> {
  return (tx, event) => {
    const { orderId, reason } = event.data as { orderId: string; reason?: string };
    const reply = { eventType: event.type, orderId, ...change, ...(reason ? { reason } : {}) } as Reply;
    return recordReply(tx, reply);
  };
}

/** The replies the orders service consumes from inventory and billing, and what each one means. */
export const replyHandlers: Record<string, EffectHandler<Tx>> = {
  [STOCK_RESERVED]: recording({ stockStatus: 'RESERVED' }),
  [STOCK_REJECTED]: recording({ stockStatus: 'REJECTED' }),
  [STOCK_RELEASED]: recording({ stockStatus: 'RELEASED' }),
  [PAYMENT_AUTHORIZED]: recording({ paymentStatus: 'AUTHORIZED' }),
  [PAYMENT_DECLINED]: recording({ paymentStatus: 'DECLINED' }),
  [PAYMENT_VOIDED]: recording({ paymentStatus: 'VOIDED' }),
};
