import type { Prisma, Tx } from '../db.ts';
import type { OrderLine } from './createOrder.ts';
import type { OrderRequest } from './orderRequest.ts';

/** A line of the request the catalog cannot sell, by its index in the request's items. */
export type UnorderableLine =
  | { index: number; sku: string; reason: 'unknown-sku' }
  | { index: number; sku: string; reason: 'other-currency'; soldIn: string };

/**
 * A request priced line by line. `fresh`: every price was read from the catalog just now, in this
 * transaction; otherwise some came from what this process read earlier.
 */
export type Pricing = { lines: OrderLine[]; unorderable: UnorderableLine[]; fresh: boolean };

type Product = { currency: string; unitPriceCents: bigint };

/** Products remembered at most; past it the memory starts again empty (a catalog that large re-reads). */
const MAX_PRODUCTS = 10_000;

const selectProducts = `
  select sku, currency, unit_price_cents
  from products
  where sku = any($1::text[])`;

/**
 * The catalog's prices as this process last read them, so that the event of a new order can be
 * built and validated BEFORE the one statement that writes it (prepareEvent, as for every other
 * event) without a catalog round trip first. It is never the authority: the write statement
 * joins every line with `products` and writes nothing unless each price and currency it was
 * given is the catalog's, in the statement's own snapshot (createOrder.ts). A price that changed
 * since it was read therefore costs one re-read and a second attempt, never a wrong price.
 * Prices come from the catalog, never from the client, as before.
 */
export class CatalogPrices {
  readonly #products = new Map<string, Product>();

  /**
   * Price every line of `request`. Reads the catalog (one statement in `tx`) when a sku has not
   * been read yet or when `refresh` asks for it, otherwise answers from memory.
   */
  async price(tx: Tx, request: OrderRequest, refresh: boolean): Promise<Pricing> {
    const skus = request.items.map((item) => item.sku);
    const fresh = refresh || skus.some((sku) => !this.#products.has(sku));
    if (fresh) await this.#read(tx, skus);
    const lines: OrderLine[] = [];
    const unorderable: UnorderableLine[] = [];
    request.items.forEach((item, index) => {
      const product = this.#products.get(item.sku);
      if (!product) unorderable.push({ index, sku: item.sku, reason: 'unknown-sku' });
      else if (product.currency !== request.currency) {
        unorderable.push({ index, sku: item.sku, reason: 'other-currency', soldIn: product.currency });
      } else lines.push({ sku: item.sku, quantity: item.quantity, unitPriceCents: product.unitPriceCents });
    });
    return { lines, unorderable, fresh };
  }

  async #read(tx: Tx, skus: string[]): Promise<void> {
    const rows = await tx.$queryRawUnsafe<{ sku: string; currency: string; unit_price_cents: bigint }[]>(
      selectProducts,
      skus,
    );
    // A sku the catalog no longer has must not stay remembered.
    for (const sku of skus) this.#products.delete(sku);
    if (this.#products.size + rows.length > MAX_PRODUCTS) this.#products.clear();
    for (const row of rows) {
      this.#products.set(row.sku, { currency: row.currency, unitPriceCents: BigInt(row.unit_price_cents) });
    }
  }
}

/** One memory per client, i.e. per database: two apps in one process (tests) never share one. */
const byClient = new WeakMap<Prisma, CatalogPrices>();

export function catalogPricesOf(prisma: Prisma): CatalogPrices {
  let prices = byClient.get(prisma);
  if (!prices) {
    prices = new CatalogPrices();
    byClient.set(prisma, prices);
  }
  return prices;
}
