/**
 * The demo's catalog: what orders sells (and at what price) and what inventory stocks. Both
 * services' migrations seed their tables from it; the load generator and the benchmarks build
 * orders from it. It is seed data, not a contract: a running service reads prices and stock from
 * its own database, never from here.
 */
export type CatalogProduct = {
  sku: string;
  name: string;
  currency: string;
  unitPriceCents: number;
  /** Units inventory starts with. */
  seededStock: number;
};

export const DEMO_CATALOG: readonly CatalogProduct[] = [
  { sku: 'KB-101', name: 'Mechanical keyboard', currency: 'EUR', unitPriceCents: 8900, seededStock: 100 },
  { sku: 'MS-202', name: 'Wireless mouse', currency: 'EUR', unitPriceCents: 2900, seededStock: 250 },
  { sku: 'MN-303', name: '27" monitor', currency: 'EUR', unitPriceCents: 24900, seededStock: 20 },
  { sku: 'HD-404', name: 'USB-C hub', currency: 'EUR', unitPriceCents: 3900, seededStock: 80 },
  { sku: 'CB-505', name: 'Braided cable', currency: 'EUR', unitPriceCents: 900, seededStock: 1000 },
];
