import type { z } from 'zod';
import type { EventEnvelope } from './envelope.ts';
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
export const eventSchemas = {
  [ORDER_CREATED]: { 1: orderCreatedV1 },
  [ORDER_CONFIRMED]: { 1: orderConfirmedV1 },
  [ORDER_CANCELLED]: { 1: orderCancelledV1 },
  [STOCK_RESERVED]: { 1: stockReservedV1 },
  [STOCK_REJECTED]: { 1: stockRejectedV1 },
  [STOCK_RELEASED]: { 1: stockReleasedV1 },
  [PAYMENT_AUTHORIZED]: { 1: paymentAuthorizedV1 },
  [PAYMENT_DECLINED]: { 1: paymentDeclinedV1 },
  [PAYMENT_VOIDED]: { 1: paymentVoidedV1 },
} as const satisfies Record<string, Record<number, z.ZodType>>;

type Registry = typeof eventSchemas;

/** A registered event type: `ORDER_CREATED`, … */
export type EventType = keyof Registry;

/** The schema versions registered for `T`: `1`, … */
export type EventVersion<T extends EventType> = keyof Registry[T] & number;

/** The data a writer gives for version `V` of `T`, as its schema takes it. */
export type EventInput<T extends EventType, V extends EventVersion<T>> = z.input<Registry[T][V]>;

/**
 * The data of a `T` event as a consumer's handler receives it: checked against its schema (of
 * whichever version registered for `T` it carries) before the handler is called.
 */
export type EventData<T extends EventType> = {
  [V in EventVersion<T>]: z.output<Registry[T][V]>;
}[EventVersion<T>];

/** An event of type `T` as it leaves Kafka, its data checked. */
export type EventOf<T extends EventType> = EventEnvelope<EventData<T>> & { type: T };

// Read off the wire, a type and version are any string and number.
const byTypeAndVersion: Readonly<Record<string, Readonly<Record<number, z.ZodType>>>> = eventSchemas;

export function schemaFor(type: string, version: number): z.ZodType | undefined {
  return byTypeAndVersion[type]?.[version];
}
