import type { NewEvent } from './envelope.ts';
import { orderId } from './limits.ts';
import { ORDER_CREATED } from './orderCreated.ts';
import { ORDER_CANCELLED, ORDER_CONFIRMED } from './orderSaga.ts';
import { PAYMENT_AUTHORIZED, PAYMENT_DECLINED, PAYMENT_VOIDED } from './payment.ts';
import type { EventInput, EventType, EventVersion } from './registry.ts';
import { STOCK_REJECTED, STOCK_RELEASED, STOCK_RESERVED } from './stock.ts';

/** A new event of type `T` at version `V`, for the outbox writer: type, version and data agree. */
export type NewEventOf<T extends EventType, V extends EventVersion<T>> = NewEvent<EventInput<T, V>> & {
  type: T;
  schemaVersion: V;
};

/**
 * The factory of `type` events at `version` (the version services write today), about the
 * aggregate `aggregateType`. Every event of ours is about one order (the order itself, its stock
 * reservation, its payment) and keyed by that order's id, so the key is the data's `orderId`: an
 * order's events of one aggregate type stay on one partition, in order. The key is the id as the
 * schema stores it (lower-case), so two spellings of one id never make two keys.
 */
function factory<T extends EventType, V extends EventVersion<T>>(type: T, version: V, aggregateType: string) {
  return (data: EventInput<T, V> & { orderId: string }): NewEventOf<T, V> => ({
    type,
    schemaVersion: version,
    aggregateType,
    aggregateId: orderId.parse(data.orderId),
    data,
  });
}

// The orders service's events, on `order.events`.
export const orderCreated = factory(ORDER_CREATED, 1, 'order');
export const orderConfirmed = factory(ORDER_CONFIRMED, 1, 'order');
export const orderCancelled = factory(ORDER_CANCELLED, 1, 'order');

// Inventory's replies, on `reservation.events`.
export const stockReserved = factory(STOCK_RESERVED, 1, 'reservation');
export const stockRejected = factory(STOCK_REJECTED, 1, 'reservation');
export const stockReleased = factory(STOCK_RELEASED, 1, 'reservation');

// Billing's replies, on `payment.events`.
export const paymentAuthorized = factory(PAYMENT_AUTHORIZED, 1, 'payment');
export const paymentDeclined = factory(PAYMENT_DECLINED, 1, 'payment');
export const paymentVoided = factory(PAYMENT_VOIDED, 1, 'payment');
