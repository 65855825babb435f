import {
  type EventEnvelope,
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  type PaymentDeclinedV1,
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
  type StockRejectedV1,
} from '@outbox/events';
import type { EffectHandler } from '@outbox/service/event-consumer';
import type { Tx } from '../db.ts';
import { recordReply } from './recordReply.ts';

const orderIdOf = (event: EventEnvelope) => (event.data as { orderId: string }).orderId;

/** The replies the orders service consumes from inventory and billing, and what each one means. */
export const replyHandlers: Record<string, EffectHandler<Tx>> = {
  [STOCK_RESERVED]: (tx, event) =>
    recordReply(tx, { eventType: event.type, orderId: orderIdOf(event), stockStatus: 'RESERVED' }),
  [STOCK_REJECTED]: (tx, event) =>
    recordReply(tx, {
      eventType: event.type,
      orderId: orderIdOf(event),
      stockStatus: 'REJECTED',
      reason: (event.data as StockRejectedV1).reason,
    }),
  [STOCK_RELEASED]: (tx, event) =>
    recordReply(tx, { eventType: event.type, orderId: orderIdOf(event), stockStatus: 'RELEASED' }),
  [PAYMENT_AUTHORIZED]: (tx, event) =>
    recordReply(tx, { eventType: event.type, orderId: orderIdOf(event), paymentStatus: 'AUTHORIZED' }),
  [PAYMENT_DECLINED]: (tx, event) =>
    recordReply(tx, {
      eventType: event.type,
      orderId: orderIdOf(event),
      paymentStatus: 'DECLINED',
      reason: (event.data as PaymentDeclinedV1).reason,
    }),
  [PAYMENT_VOIDED]: (tx, event) =>
    recordReply(tx, { eventType: event.type, orderId: orderIdOf(event), paymentStatus: 'VOIDED' }),
};
