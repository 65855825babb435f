import { z } from 'zod';
import { orderId } from './limits.ts';

// The orders service's decisions, on the `order.events` topic (aggregate: the order).

export const ORDER_CONFIRMED = 'ORDER_CONFIRMED';
export const ORDER_CANCELLED = 'ORDER_CANCELLED';

/** ORDER_CONFIRMED v1: stock is reserved and payment authorized; the order will be fulfilled. */
export const orderConfirmedV1 = z.strictObject({
  orderId,
});

/**
 * ORDER_CANCELLED v1: inventory or billing said no. Inventory releases the order's stock and
 * billing voids its authorization, whichever of them said yes.
 */
export const orderCancelledV1 = z.strictObject({
  orderId,
  reason: z.string().min(1),
});

export type OrderConfirmedV1 = z.infer<typeof orderConfirmedV1>;
export type OrderCancelledV1 = z.infer<typeof orderCancelledV1>;
