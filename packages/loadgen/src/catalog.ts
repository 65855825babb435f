/**
 * What the load generator knows about the demo's catalog, copied from the seeds: prices from
 * apps/orders/migrations/001_orders.sql, stock from apps/inventory/migrations/001_inventory.sql.
 * It is used only to build orders with a known fate; the API still prices every order itself.
 */
export type Product = { sku: string; unitPriceCents: number; seededStock: number };

export const CURRENCY = 'EUR';

export const CATALOG: readonly Product[] = [
  { sku: 'KB-101', unitPriceCents: 8900, seededStock: 100 },
  { sku: 'MS-202', unitPriceCents: 2900, seededStock: 250 },
  { sku: 'MN-303', unitPriceCents: 24900, seededStock: 20 },
  { sku: 'HD-404', unitPriceCents: 3900, seededStock: 80 },
  { sku: 'CB-505', unitPriceCents: 900, seededStock: 1000 },
];

/** The orders API refuses a line above this quantity (MAX_QUANTITY in apps/orders/src/orders/orderRequest.ts). */
export const MAX_QUANTITY = 1000;

/** Billing declines amounts above this (PAYMENT_LIMIT_CENTS, default in apps/billing/src/config.ts). */
export const PAYMENT_LIMIT_CENTS = 1_000_000;
