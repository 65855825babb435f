import type { Service } from '../services.ts';
import type { ConsoleInfo } from '../shared/apiTypes.ts';

/**
 * What can be ordered (the orders database's catalog) and how many are in stock (inventory's own
 * table): the form offers the SKUs, and shows how to order more than there is.
 */
export async function catalog(orders: Service, inventory: Service): Promise<ConsoleInfo['catalog']> {
  const [products, stock] = await Promise.all([
    orders.pool
      .query<{ sku: string; name: string; currency: string; unit_price_cents: string }>(
        'select sku, name, currency, unit_price_cents::text from products order by sku',
      )
      .then(
        (result) => result.rows,
        () => [],
      ),
    inventory.pool.query<{ sku: string; available: number }>('select sku, available from stock').then(
      (result) => new Map(result.rows.map((row) => [row.sku, row.available])),
      () => new Map<string, number>(),
    ),
  ]);
  return products.map((product) => ({
    sku: product.sku,
    name: product.name,
    unitPriceCents: product.unit_price_cents,
    currency: product.currency,
    available: stock.get(product.sku) ?? null,
  }));
}
