import { z } from 'zod';
import { orderId, quantity, sku } from './limits.ts';

// The inventory service's replies, on the `reservation.events` topic (aggregate: the order's
// stock reservation, keyed by the order id).

export const STOCK_RESERVED = 'STOCK_RESERVED';
export const STOCK_REJECTED = 'STOCK_REJECTED';
export const STOCK_RELEASED = 'STOCK_RELEASED';

/** STOCK_RESERVED v1: every line of the order is reserved. */
export const stockReservedV1 = z.strictObject({
  orderId,
  items: z.array(z.strictObject({ sku, quantity })).min(1),
});

/** STOCK_REJECTED v1: at least one line could not be reserved, so none is. */
export const stockRejectedV1 = z.strictObject({
  orderId,
  reason: z.string().min(1),
  /** The first SKU that was short, when that is the reason. */
  sku: z.string().min(1).optional(),
});

/** STOCK_RELEASED v1: the reservation of a cancelled order was returned to stock. */
export const stockReleasedV1 = z.strictObject({
  orderId,
});

export type StockReservedV1 = z.infer<typeof stockReservedV1>;
export type StockRejectedV1 = z.infer<typeof stockRejectedV1>;
export type StockReleasedV1 = z.infer<typeof stockReleasedV1>;
