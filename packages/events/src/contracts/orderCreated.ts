import { z } from 'zod';

export const ORDER_CREATED = 'ORDER_CREATED';

/**
 * ORDER_CREATED v1: an order was accepted. Money is in minor units (cents) as a decimal string,
 * because a JSON number cannot carry every int64 exactly and floats must never hold money.
 */
export const orderCreatedV1 = z.strictObject({
  orderId: z.uuid(),
  customerId: z.string().min(1),
  currency: z.string().regex(/^[A-Z]{3}$/),
  totalCents: z.string().regex(/^\d+$/),
  items: z
    .array(
      z.strictObject({
        sku: z.string().min(1),
        quantity: z.number().int().positive(),
        unitPriceCents: z.string().regex(/^\d+$/),
      }),
    )
    .min(1),
});

export type OrderCreatedV1 = z.infer<typeof orderCreatedV1>;
