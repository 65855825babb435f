import type { Tx } from '../db.ts';
import { type FieldError, HttpProblem } from '../http/problem.ts';
import type { OrderRequest } from './orderRequest.ts';

/**
 * The business change alone: price every line from the catalog and insert the order with its
 * items. It knows nothing about events; placeOrder.ts adds the event in the same transaction.
 */
export async function createOrder(tx: Tx, request: OrderRequest, orderId: string) {
  const skus = request.items.map((item) => item.sku);
  const products = await tx.product.findMany({ where: { sku: { in: skus } } });
  const bySku = new Map(products.map((product) => [product.sku, product]));

  // Price every line from the catalog, collecting every line that cannot be ordered.
  const lines: { sku: string; quantity: number; unitPriceCents: bigint }[] = [];
  const errors: FieldError[] = [];
  request.items.forEach((item, index) => {
    const product = bySku.get(item.sku);
    const pointer = `#/items/${index}/sku`;
    if (!product) errors.push({ pointer, detail: `unknown sku ${item.sku}` });
    else if (product.currency !== request.currency) {
      errors.push({ pointer, detail: `${item.sku} is sold in ${product.currency}, not ${request.currency}` });
    } else lines.push({ sku: item.sku, quantity: item.quantity, unitPriceCents: product.unitPriceCents });
  });
  if (errors.length > 0) {
    throw new HttpProblem(
      422,
      'urn:problem:unorderable-items',
      'Items cannot be ordered',
      errors.map((error) => error.detail).join('; '),
      errors,
    );
  }

  return tx.order.create({
    data: {
      id: orderId,
      customerId: request.customerId,
      currency: request.currency,
      status: 'PENDING',
      totalCents: lines.reduce((sum, line) => sum + line.unitPriceCents * BigInt(line.quantity), 0n),
      items: { create: lines },
    },
    include: { items: true },
  });
}

export type CreatedOrder = Awaited<ReturnType<typeof createOrder>>;
