import { z } from 'zod';
import { orderId, positiveCents } from './limits.ts';

// The billing service's replies, on the `payment.events` topic (aggregate: the order's payment,
// keyed by the order id).

export const PAYMENT_AUTHORIZED = 'PAYMENT_AUTHORIZED';
export const PAYMENT_DECLINED = 'PAYMENT_DECLINED';
export const PAYMENT_VOIDED = 'PAYMENT_VOIDED';

/** PAYMENT_AUTHORIZED v1: the provider authorized the order total. */
export const paymentAuthorizedV1 = z.strictObject({
  orderId,
  authorizationId: z.string().min(1),
  amountCents: positiveCents,
  currency: z.string().regex(/^[A-Z]{3}$/),
});

/** PAYMENT_DECLINED v1: the provider refused; nothing is held. */
export const paymentDeclinedV1 = z.strictObject({
  orderId,
  reason: z.string().min(1),
});

/** PAYMENT_VOIDED v1: the authorization of a cancelled order was released. */
export const paymentVoidedV1 = z.strictObject({
  orderId,
  authorizationId: z.string().min(1),
});

export type PaymentAuthorizedV1 = z.infer<typeof paymentAuthorizedV1>;
export type PaymentDeclinedV1 = z.infer<typeof paymentDeclinedV1>;
export type PaymentVoidedV1 = z.infer<typeof paymentVoidedV1>;
