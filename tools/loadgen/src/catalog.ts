import { DEMO_CATALOG } from '@outbox/contracts';

/**
 * What the load generator knows about the demo's catalog: the list both services' migrations seed
 * from. It is used only to build orders with a known fate; the API still prices every order itself.
 */
export type Product = { sku: string; unitPriceCents: number; seededStock: number };

export const CURRENCY = 'EUR';

export const CATALOG: readonly Product[] = DEMO_CATALOG.filter((product) => product.currency === CURRENCY);

/** The orders API refuses a line above this quantity (MAX_QUANTITY in apps/orders/src/orders/orderRequest.ts). */
export const MAX_QUANTITY = 1000;

/** Billing declines amounts above this (PAYMENT_LIMIT_CENTS, default in apps/billing/src/config.ts). */
export const PAYMENT_LIMIT_CENTS = 1_000_000;
