import { Router } from 'express';
import { z } from 'zod';
import type { Prisma } from '../db.ts';
import { listOrders, listOrdersQuery } from '../orders/listOrders.ts';
import { orderRequest } from '../orders/orderRequest.ts';
import { placeOrder } from '../orders/placeOrder.ts';
import { HttpProblem, validationProblem } from './problem.ts';

type OrderWithItems = Awaited<ReturnType<typeof placeOrder>>['order'];
type HistoryEntry = { eventType: string; detail: string | null; at: Date };

/** The API's view of an order: money as decimal strings of minor units, like in the events. */
function toOrderResource(order: OrderWithItems, history?: HistoryEntry[]) {
  return {
    id: order.id,
    customerId: order.customerId,
    currency: order.currency,
    status: order.status,
    stockStatus: order.stockStatus,
    paymentStatus: order.paymentStatus,
    ...(order.cancelReason ? { cancelReason: order.cancelReason } : {}),
    totalCents: order.totalCents.toString(),
    createdAt: order.createdAt.toISOString(),
    items: order.items.map((item) => ({
      sku: item.sku,
      quantity: item.quantity,
      unitPriceCents: item.unitPriceCents.toString(),
    })),
    ...(history
      ? {
          history: history.map((entry) => ({
            event: entry.eventType,
            detail: entry.detail,
            at: entry.at.toISOString(),
          })),
        }
      : {}),
  };
}

/** Printable ASCII, as the IETF Idempotency-Key draft suggests for the key's value. */
const idempotencyKeyHeader = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

export function ordersRouter(prisma: Prisma): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    if (!req.is('application/json')) {
      throw new HttpProblem(
        415,
        'urn:problem:unsupported-media-type',
        'Unsupported media type',
        'Send the order as JSON with Content-Type: application/json.',
      );
    }
    const rawKey = req.get('Idempotency-Key');
    const key = rawKey === undefined ? undefined : idempotencyKeyHeader.safeParse(rawKey);
    if (key && !key.success) {
      throw new HttpProblem(400, 'urn:problem:validation', 'Invalid Idempotency-Key', 'See errors.', [
        { header: 'Idempotency-Key', detail: key.error.issues[0]?.message ?? 'invalid' },
      ]);
    }
    const parsed = orderRequest.safeParse(req.body);
    if (!parsed.success) throw validationProblem(parsed.error);

    const { order, replayed } = await placeOrder(prisma, parsed.data, key?.data);
    // A replay answers exactly like the original request did, and says that it is a replay.
    if (replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).location(`${req.baseUrl}/${order.id}`).json(toOrderResource(order));
  });

  router.get('/', async (req, res) => {
    const query = listOrdersQuery.safeParse(req.query);
    if (!query.success) throw validationProblem(query.error, 'query');
    const { orders, nextCursor } = await listOrders(prisma, query.data);
    res.json({ items: orders.map((order) => toOrderResource(order)), ...(nextCursor ? { nextCursor } : {}) });
  });

  router.get('/:id', async (req, res) => {
    const id = z.uuid().safeParse(req.params.id);
    if (!id.success) {
      throw new HttpProblem(
        400,
        'urn:problem:validation',
        'Invalid order id',
        'The order id must be a UUID.',
        [{ parameter: 'id', detail: 'expected a UUID' }],
      );
    }
    const order = await prisma.order.findUnique({
      where: { id: id.data },
      include: { items: true, history: { orderBy: { id: 'asc' } } },
    });
    if (!order) {
      throw new HttpProblem(404, 'urn:problem:not-found', 'Order not found', `No order has id ${id.data}.`);
    }
    res.json(toOrderResource(order, order.history));
  });

  return router;
}
