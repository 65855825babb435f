import { HttpProblem } from '@outbox/runtime/problem';
import { type Response, Router } from 'express';
import { z } from 'zod';
import type { Prisma } from '../db.ts';
import type { UnorderableLine } from '../orders/catalogPrices.ts';
import type { CreatedOrder } from '../orders/createOrder.ts';
import { listOrders, listOrdersQuery } from '../orders/listOrders.ts';
import { type OrderRequest, orderRequest } from '../orders/orderRequest.ts';
import type { PlaceOrderResult } from '../orders/placeOrder.ts';
import type { Admission } from './admission.ts';
import { jsonBody } from './jsonBody.ts';
import { NOT_FOUND, validationProblem } from './problem.ts';

/** Places the orders of POST /orders: placeOrder, or the demo's writer (src/demo/). */
export type OrderPlacer = {
  /** Reported on /healthz: `outbox`, or the naive write mode the demo switched to. */
  readonly mode: string;
  place(request: OrderRequest, idempotencyKey?: string): Promise<PlaceOrderResult>;
};

type HistoryEntry = { eventType: string; detail: string | null; at: Date };

/** The API's view of an order: money as decimal strings of minor units, like in the events. */
function toOrderResource(order: CreatedOrder, history?: HistoryEntry[]) {
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

/** 422 naming every line the catalog cannot sell, each by a pointer to its sku. */
function unorderableProblem(request: OrderRequest, lines: UnorderableLine[]): HttpProblem {
  const errors = lines.map((line) => ({
    pointer: `#/items/${line.index}/sku`,
    detail:
      line.reason === 'unknown-sku'
        ? `unknown sku ${line.sku}`
        : `${line.sku} is sold in ${line.soldIn}, not ${request.currency}`,
  }));
  return new HttpProblem(422, 'Items cannot be ordered', errors.map((error) => error.detail).join('; '), {
    type: 'urn:problem:unorderable-items',
    errors,
  });
}

function keyReusedProblem(key: string): HttpProblem {
  return new HttpProblem(
    422,
    'Idempotency-Key reused with a different request',
    `The key ${JSON.stringify(key)} was already used for a different order request; use a new key for a new order.`,
    {
      type: 'urn:problem:idempotency-key-reused',
      errors: [{ header: 'Idempotency-Key', detail: 'already used with a different body' }],
    },
  );
}

const orderWithHistory = (prisma: Prisma, id: string) =>
  prisma.order.findUnique({ where: { id }, include: { items: true, history: { orderBy: { id: 'asc' } } } });

/** When the request arrived (httpMetrics.ts), for the admission limit's refusal times. */
const arrivedAt = (res: Response): number | undefined => res.locals.arrivedAt as number | undefined;

/**
 * Every route's database work runs in an admission slot (admission.ts): past capacity a request is
 * refused in milliseconds, before its transaction, rather than queued on the pool for seconds.
 * Reads take a slot too: they hold a pooled connection like a write does. An order that would be
 * refused on arrival never gets here: the front door (frontDoor.ts) answers it before its body is
 * read (so under overload a malformed one is answered 503 too, and 400 when it is sent again); one
 * that may queue is validated first, and asks for its slot after.
 */
export function ordersRouter(prisma: Prisma, writer: OrderPlacer, admission: Admission): Router {
  const router = Router();

  router.post('/', jsonBody(), async (req, res) => {
    if (!req.is('application/json')) {
      throw new HttpProblem(
        415,
        'Unsupported media type',
        'Send the order as JSON with Content-Type: application/json.',
        { type: 'urn:problem:unsupported-media-type' },
      );
    }
    const rawKey = req.get('Idempotency-Key');
    const key = rawKey === undefined ? undefined : idempotencyKeyHeader.safeParse(rawKey);
    if (key && !key.success) {
      throw new HttpProblem(400, 'Invalid Idempotency-Key', 'See errors.', {
        type: 'urn:problem:validation',
        errors: [{ header: 'Idempotency-Key', detail: key.error.issues[0]?.message ?? 'invalid' }],
      });
    }
    const parsed = orderRequest.safeParse(req.body);
    if (!parsed.success) throw validationProblem(parsed.error);

    const result = await admission.run(() => writer.place(parsed.data, key?.data), arrivedAt(res));
    if (result.kind === 'unorderable') throw unorderableProblem(parsed.data, result.lines);
    if (result.kind === 'key-reused') throw keyReusedProblem(key?.data ?? '');
    // A replay answers exactly like the original request did, and says that it is a replay.
    if (result.kind === 'replayed') res.set('Idempotent-Replayed', 'true');
    res.status(201).location(`${req.baseUrl}/${result.order.id}`).json(toOrderResource(result.order));
  });

  router.get('/', async (req, res) => {
    const query = listOrdersQuery.safeParse(req.query);
    if (!query.success) throw validationProblem(query.error, 'query');
    const { orders, nextCursor } = await admission.run(() => listOrders(prisma, query.data), arrivedAt(res));
    res.json({ items: orders.map((order) => toOrderResource(order)), ...(nextCursor ? { nextCursor } : {}) });
  });

  router.get('/:id', async (req, res) => {
    const id = z.uuid().safeParse(req.params.id);
    if (!id.success) {
      throw new HttpProblem(400, 'Invalid order id', 'The order id must be a UUID.', {
        type: 'urn:problem:validation',
        errors: [{ parameter: 'id', detail: 'expected a UUID' }],
      });
    }
    const order = await admission.run(() => orderWithHistory(prisma, id.data), arrivedAt(res));
    if (!order) {
      throw new HttpProblem(404, 'Order not found', `No order has id ${id.data}.`, { type: NOT_FOUND });
    }
    res.json(toOrderResource(order, order.history));
  });

  return router;
}
