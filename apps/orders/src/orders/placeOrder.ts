import { randomUUID } from 'node:crypto';
import { ORDER_CREATED, type OrderCreatedV1, writeEvent } from '@outbox/events';
import type { Prisma } from '../db.ts';
import { type FieldError, HttpProblem } from '../http/problem.ts';
import type { OrderRequest } from './orderRequest.ts';

export const EVENT_SOURCE = '/orders';

/**
 * The heart of the pattern. The order, its items and its ORDER_CREATED event are written in ONE
 * interactive transaction: if any statement fails, none of them exists; if the commit succeeds,
 * the event is durably queued and the relay will publish it, however long Kafka is away.
 */
export async function placeOrder(prisma: Prisma, request: OrderRequest) {
  return prisma.$transaction(async (tx) => {
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
        errors.push({
          pointer,
          detail: `${item.sku} is sold in ${product.currency}, not ${request.currency}`,
        });
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

    const totalCents = lines.reduce((sum, line) => sum + line.unitPriceCents * BigInt(line.quantity), 0n);

    const order = await tx.order.create({
      data: {
        id: randomUUID(),
        customerId: request.customerId,
        currency: request.currency,
        status: 'PENDING',
        totalCents,
        items: { create: lines },
      },
      include: { items: true },
    });

    const data: OrderCreatedV1 = {
      orderId: order.id,
      customerId: order.customerId,
      currency: order.currency,
      totalCents: totalCents.toString(),
      items: lines.map((line) => ({ ...line, unitPriceCents: line.unitPriceCents.toString() })),
    };
    await writeEvent(tx, EVENT_SOURCE, {
      type: ORDER_CREATED,
      schemaVersion: 1,
      aggregateType: 'order',
      aggregateId: order.id,
      data,
    });
    return order;
  });
}
