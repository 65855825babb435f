import { randomUUID } from 'node:crypto';
import { type Context, context } from '@opentelemetry/api';
import { type OutboxInsert, prepareEvent } from '@outbox/outbox';
import type { Prisma, Tx } from '../db.ts';
import { type CatalogPrices, catalogPricesOf, type UnorderableLine } from './catalogPrices.ts';
import { outcomeOfLostCommit } from './commitOutcome.ts';
import {
  type CreatedOrder,
  EVENT_SOURCE,
  insertOrderWithEvent,
  type KeyClaim,
  newOrder,
  orderCreated,
  type WriteOutcome,
} from './createOrder.ts';
import { insertOrdersWithEvents, type OrderWithEvent } from './createOrders.ts';
import { earlierRequest, requestHash } from './idempotency.ts';
import type { OrderRequest } from './orderRequest.ts';

/**
 * Attempts at most when the catalog changes between reading a price and writing it; each attempt
 * re-reads the catalog, so only a catalog rewritten three times within one request exhausts them.
 */
const MAX_ATTEMPTS = 3;

/** What POST /orders did; nothing was written unless `created`. */
export type PlaceOrderResult =
  | { kind: 'created'; order: CreatedOrder }
  /** An earlier request with the same Idempotency-Key and body created `order`. */
  | { kind: 'replayed'; order: CreatedOrder }
  /** An earlier request used the same Idempotency-Key with a different body. */
  | { kind: 'key-reused' }
  /** Lines the catalog cannot sell (unknown sku, another currency), each named. */
  | { kind: 'unorderable'; lines: UnorderableLine[] };

/** What the order's transaction did: PlaceOrderResult, and with a created order its event. */
export type WriteResult =
  | Exclude<PlaceOrderResult, { kind: 'created' }>
  | { kind: 'created'; order: CreatedOrder; event: OutboxInsert };

/**
 * One POST /orders to place: its validated body, its Idempotency-Key if it sent one, and the trace
 * context of its request (default: the active one), in which its statement runs and which its
 * event keeps, whichever request's transaction writes it.
 */
export type OrderToPlace = {
  request: OrderRequest;
  idempotencyKey?: string | undefined;
  traceContext?: Context;
};

/**
 * The heart of the pattern. The order, its items and its ORDER_CREATED event are written in ONE
 * interactive transaction: if any statement fails, none of them exists; if the commit succeeds,
 * the event is durably queued and the relay will publish it, however long Kafka is away.
 * With an idempotency key, a repeated request returns the order the first one created
 * (`replayed`) and writes nothing.
 */
export async function placeOrder(
  prisma: Prisma,
  request: OrderRequest,
  idempotencyKey?: string,
): Promise<PlaceOrderResult> {
  const [placed] = await placeOrders(prisma, [{ request, idempotencyKey }]);
  if (!placed) throw new Error('placeOrders answered no order');
  return placed;
}

/**
 * Several orders in ONE transaction, each written as placeOrder writes one (its order, items and
 * event together), all by one statement (writeOrders): the group commit of orderBatches.ts. One
 * result per order, in their order.
 * Rejects when the transaction failed before its COMMIT was sent, and then nothing was written.
 * If the answer to the COMMIT is lost, each created order's fate is asked for (commitOutcome.ts):
 * that order's promise settles with what happened, the others' answers stand.
 */
export async function placeOrders(
  prisma: Prisma,
  orders: OrderToPlace[],
): Promise<Promise<PlaceOrderResult>[]> {
  const catalog = catalogPricesOf(prisma);
  // Chosen before the transaction: if the answer to its COMMIT is lost, these ids find out what happened.
  const orderIds = orders.map(() => randomUUID());
  const written: PlaceOrderResult[] = [];
  try {
    await prisma.$transaction(async (tx) => {
      written.push(...(await writeOrders(tx, catalog, orders, orderIds)));
    });
  } catch (err: unknown) {
    // Until the callback returns the orders, no COMMIT was sent and the failure wrote nothing.
    // After, the server may have committed before the connection broke: ask it, order by order.
    if (written.length < orders.length || !written.some((result) => result.kind === 'created')) throw err;
    return written.map(
      async (result, i): Promise<PlaceOrderResult> =>
        result.kind === 'created'
          ? { kind: 'created', order: await outcomeOfLostCommit(prisma, orderIds[i] as string, err) }
          : result,
    );
  }
  return written.map((result) => Promise.resolve(result));
}

/**
 * The orders of one transaction, each with the id chosen for it. Two or more are written by ONE
 * statement (createOrders.ts), each priced from the catalog as this process last read it and its
 * event prepared in its own request's trace context. An order that statement did not write (a
 * line the catalog cannot sell, a price that changed, a key held before or by an order earlier in
 * the batch) takes writeOrder's path alone, which answers it as it answers a single order.
 */
async function writeOrders(
  tx: Tx,
  catalog: CatalogPrices,
  orders: OrderToPlace[],
  orderIds: string[],
): Promise<WriteResult[]> {
  const claims = orders.map(({ request, idempotencyKey }) => keyClaim(request, idempotencyKey));
  const batch: (OrderWithEvent & { index: number })[] = [];
  if (orders.length > 1) {
    for (const [index, { request, traceContext = context.active() }] of orders.entries()) {
      const pricing = await catalog.price(tx, request, false);
      if (pricing.unorderable.length > 0) continue;
      const order = newOrder(orderIds[index] as string, request, pricing.lines);
      const event = prepareEvent(EVENT_SOURCE, orderCreated(order), traceContext);
      batch.push({ index, order, event, claim: claims[index] });
    }
  }
  const outcomes = batch.length > 0 ? await insertOrdersWithEvents(tx, batch) : [];
  const created = new Map<number, WriteResult>();
  batch.forEach(({ index, event }, k) => {
    const outcome = outcomes[k];
    if (outcome?.written) created.set(index, { kind: 'created', order: outcome.order, event });
  });
  const written: WriteResult[] = [];
  for (const [index, { request, traceContext = context.active() }] of orders.entries()) {
    const id = orderIds[index] as string;
    written.push(
      created.get(index) ??
        (await context.with(traceContext, () => writeOrder(tx, catalog, id, request, claims[index]))),
    );
  }
  return written;
}

export function keyClaim(request: OrderRequest, idempotencyKey: string | undefined): KeyClaim | undefined {
  return idempotencyKey === undefined
    ? undefined
    : { key: idempotencyKey, requestHash: requestHash(request) };
}

/** How the order's statement is run: production's writes the order with its event (createOrder.ts). */
export type InsertOrder = (
  tx: Tx,
  order: CreatedOrder,
  event: OutboxInsert,
  claim: KeyClaim | undefined,
) => Promise<WriteOutcome>;

/**
 * The order's transaction, up to its COMMIT. The happy path is ONE statement (key claim, order,
 * items, event: createOrder.ts). The prices come from the catalog as this process last read it
 * (catalogPrices.ts), so the event is validated by prepareEvent before it is sent; the statement
 * checks each price against `products` and writes nothing if one differs. The other paths (a key
 * used before, a line the catalog cannot sell, a price that changed) run the extra queries their
 * answer needs. The demo's naive write modes, which send the event themselves, pass an `insert`
 * of their own that leaves the outbox row out (demo/orderAlone.ts).
 */
export async function writeOrder(
  tx: Tx,
  catalog: CatalogPrices,
  orderId: string,
  request: OrderRequest,
  claim: KeyClaim | undefined,
  insert: InsertOrder = insertOrderWithEvent,
): Promise<WriteResult> {
  let refresh = false;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const pricing = await catalog.price(tx, request, refresh);
    if (pricing.unorderable.length > 0) {
      if (pricing.fresh) {
        // The catalog, read just now, cannot sell these lines. A key used before still answers
        // first, as a replay must not depend on today's catalog.
        const earlier = claim && (await earlierRequest(tx, claim));
        return earlier ?? { kind: 'unorderable', lines: pricing.unorderable };
      }
    } else {
      const order = newOrder(orderId, request, pricing.lines);
      const event = prepareEvent(EVENT_SOURCE, orderCreated(order));
      const outcome = await insert(tx, order, event, claim);
      if (outcome.written) return { kind: 'created', order: outcome.order, event };
      if (claim && outcome.allPriced && !outcome.keyClaimed) {
        const earlier = await earlierRequest(tx, claim);
        // The key was held by a request whose row is gone again only if retention deleted it
        // in between: a key that old answers like a new one would, on the next attempt.
        if (earlier) return earlier;
      }
    }
    // A remembered price or currency disagreed with the catalog: read it again and retry.
    refresh = true;
  }
  throw new Error(`the catalog changed under order ${orderId} ${MAX_ATTEMPTS} times in a row`);
}
