import type { z } from 'zod';
import { ORDER_CREATED, orderCreatedV1 } from './orderCreated.ts';
import { ORDER_CANCELLED, ORDER_CONFIRMED, orderCancelledV1, orderConfirmedV1 } from './orderSaga.ts';
import {
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  paymentAuthorizedV1,
  paymentDeclinedV1,
  paymentVoidedV1,
} from './payment.ts';
import {
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
  stockRejectedV1,
  stockReleasedV1,
  stockReservedV1,
} from './stock.ts';

/**
 * Every event type and schema version the system knows, with the schema its data must satisfy.
 * Writers validate before an event enters the outbox; consumers validate after it leaves Kafka
 * and dead-letter what does not match (an unknown type or version included).
 */
export const eventSchemas: Record<string, Record<number, z.ZodType>> = {
  [ORDER_CREATED]: { 1: orderCreatedV1 },
  [ORDER_CONFIRMED]: { 1: orderConfirmedV1 },
  [ORDER_CANCELLED]: { 1: orderCancelledV1 },
  [STOCK_RESERVED]: { 1: stockReservedV1 },
  [STOCK_REJECTED]: { 1: stockRejectedV1 },
  [STOCK_RELEASED]: { 1: stockReleasedV1 },
  [PAYMENT_AUTHORIZED]: { 1: paymentAuthorizedV1 },
  [PAYMENT_DECLINED]: { 1: paymentDeclinedV1 },
  [PAYMENT_VOIDED]: { 1: paymentVoidedV1 },
};

export function schemaFor(type: string, version: number): z.ZodType | undefined {
  return eventSchemas[type]?.[version];
}
