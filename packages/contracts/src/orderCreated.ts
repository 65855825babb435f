import { z } from 'zod';
import { orderId, positiveCents, quantity, sku } from './limits.ts';

export const ORDER_CREATED = 'ORDER_CREATED';

/**
 * ORDER_CREATED v1: an order was accepted. Money is in minor units (cents) as a decimal string,
 * because a JSON number cannot carry every int64 exactly and floats must never hold money.
 */
export const orderCreatedV1 = z.strictObject({
  orderId,
  customerId: z.string().min(1),
  currency: z.string().regex(/^[A-Z]{3}$/),
  totalCents: positiveCents,
  items: z
    .array(
      z.strictObject({
        sku,
        quantity,
        unitPriceCents: positiveCents,
      }),
    )
    .min(1)
    // The order's lines are keyed (order_id, sku) in orders and inventory: one line per SKU.
    .refine((items) => new Set(items.map((item) => item.sku)).size === items.length, {
      message: 'the same SKU appears on two lines',
    }),
});

export type OrderCreatedV1 = z.infer<typeof orderCreatedV1>;
