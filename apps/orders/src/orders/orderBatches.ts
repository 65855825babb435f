import { context } from '@opentelemetry/api';
import type { Prisma } from '../db.ts';
import type { OrderRequest } from './orderRequest.ts';
import { type OrderToPlace, type PlaceOrderResult, placeOrder, placeOrders } from './placeOrder.ts';

export type OrderBatchOptions = {
  /** Orders in one transaction at most; 1 places every order in a transaction of its own. */
  maxBatch: number;
  /** Transactions writing orders at once at most: each holds one pooled connection. */
  concurrency: number;
  /**
   * How long an order may wait for others to share its transaction when a slot is free; 0 writes
   * it at once. The batch is written when its oldest order has waited this long, or when it is full.
   */
  lingerMs?: number;
};

type Waiting = OrderToPlace & {
  resolve: (result: PlaceOrderResult) => void;
  reject: (err: unknown) => void;
  /** When it was handed to the batches (performance.now()). */
  arrivedAt: number;
};

/**
 * Group commit for POST /orders. Requests that arrive while every transaction slot is busy wait,
 * and the next slot to come free writes all of them (up to `maxBatch`) in ONE transaction and one
 * statement, each order with its own event (placeOrders), so the BEGIN, the statement's parse and
 * plan, the COMMIT and its WAL flush, and the round trips around them are paid once per batch
 * instead of once per order. Under load the batches grow with the queue. At low rates a slot is
 * always free, and an order would commit alone: with `lingerMs`, it waits that long for company
 * first (as PostgreSQL's commit_delay does for a WAL flush), the price of a batch in latency.
 *
 * One order's failure must not fail the others: when a batch's transaction fails before its
 * COMMIT (nothing was written), each of its orders is placed again in a transaction of its own,
 * and only the order that fails alone answers with its error.
 */
export class OrderBatches {
  readonly #prisma: Prisma;
  readonly #options: OrderBatchOptions;
  readonly #waiting: Waiting[] = [];
  #writing = 0;
  #wakeUp: NodeJS.Timeout | undefined;

  constructor(prisma: Prisma, options: OrderBatchOptions) {
    this.#prisma = prisma;
    this.#options = options;
  }

  place(request: OrderRequest, idempotencyKey?: string): Promise<PlaceOrderResult> {
    // The request's trace, taken now: the transaction that writes this order may be another's.
    const traceContext = context.active();
    return new Promise((resolve, reject) => {
      this.#waiting.push({
        request,
        idempotencyKey,
        traceContext,
        resolve,
        reject,
        arrivedAt: performance.now(),
      });
      this.#next();
    });
  }

  #next(): void {
    while (this.#writing < this.#options.concurrency && this.#waiting.length > 0) {
      const waitMs = this.#lingerLeftMs();
      if (waitMs > 0) {
        this.#wakeUp ??= setTimeout(() => {
          this.#wakeUp = undefined;
          this.#next();
        }, waitMs);
        return;
      }
      const batch = this.#waiting.splice(0, this.#options.maxBatch);
      this.#writing++;
      void this.#write(batch).finally(() => {
        this.#writing--;
        this.#next();
      });
    }
  }

  /** How much longer the oldest waiting order lingers for company: 0 once the batch is full. */
  #lingerLeftMs(): number {
    const { lingerMs = 0, maxBatch } = this.#options;
    const oldest = this.#waiting[0];
    if (lingerMs === 0 || !oldest || this.#waiting.length >= maxBatch) return 0;
    return oldest.arrivedAt + lingerMs - performance.now();
  }

  async #write(batch: Waiting[]): Promise<void> {
    let placed: Promise<PlaceOrderResult>[];
    try {
      placed = await placeOrders(this.#prisma, batch);
    } catch (err) {
      if (batch.length === 1) batch[0]?.reject(err);
      else await Promise.all(batch.map((order) => this.#alone(order)));
      return;
    }
    await Promise.all(placed.map((result, i) => result.then(batch[i]?.resolve, batch[i]?.reject)));
  }

  #alone({
    request,
    idempotencyKey,
    traceContext = context.active(),
    resolve,
    reject,
  }: Waiting): Promise<void> {
    return context
      .with(traceContext, () => placeOrder(this.#prisma, request, idempotencyKey))
      .then(resolve, reject);
  }
}
