import { randomUUID } from 'node:crypto';
import type { WriteMode } from '@outbox/contracts';
import type { Logger } from 'pino';
import type { Prisma } from '../db.ts';
import { catalogPricesOf } from '../orders/catalogPrices.ts';
import type { OrderBatches } from '../orders/orderBatches.ts';
import type { OrderRequest } from '../orders/orderRequest.ts';
import { keyClaim, type PlaceOrderResult, placeOrder, writeOrder } from '../orders/placeOrder.ts';
import type { NaivePublisher } from './naivePublisher.ts';
import { insertOrderAlone } from './orderAlone.ts';

/** Test-only fault points between the two writes (refused unless OUTBOX_ALLOW_FAULTS allows them). */
export type WriteFaults = {
  /** kill -9 the process between the two writes of its n-th order written, or the first after it to get there (0: never). */
  killBetweenWritesAt?: number;
  /** Every n-th order's transaction fails after its write, right before COMMIT (0: never). */
  failCommitEvery?: number;
};

export type OrderWriterOptions = {
  prisma: Prisma;
  /** How the outbox mode without fault points places its orders, as production does. */
  batches?: OrderBatches;
  mode?: WriteMode;
  /** Sends ORDER_CREATED from the request; needed by the naive modes only. */
  publisher?: NaivePublisher;
  faults?: WriteFaults;
  logger?: Logger;
};

/**
 * How POST /orders gets ORDER_CREATED to Kafka, in the local demo and the chaos suite.
 *
 * - `outbox`: the event is a row of the order's own transaction; the relay publishes it. Both
 *   exist or neither does, and Kafka may be away for hours. The only mode of production, which
 *   never gets here: it places orders with placeOrder alone.
 * - `commit-then-publish`: commit the order, then send the event from the request. A broker that
 *   is down or slow, or a process that dies in between, leaves a committed order whose event was
 *   never sent: a LOST event, the order PENDING for ever (until the saga's timeout cancels it).
 * - `publish-then-commit`: send the event inside the transaction, then commit. A transaction that
 *   fails after the send, or a process that dies before COMMIT, leaves an event for an order that
 *   never existed: a GHOST event, and inventory reserves and billing charges a phantom order.
 *
 * The naive modes are the dual writes the outbox exists to prevent, kept so the demo and the
 * chaos suite can show them failing on the same system under the same faults (docs/chaos.md).
 * Neither writes an outbox row for ORDER_CREATED; the saga's later events still go through it.
 *
 * Places orders in the current write mode, which the local demo may switch at run time.
 */
export class OrderWriter {
  mode: WriteMode;
  readonly #options: OrderWriterOptions;
  #ordersWritten = 0;

  constructor(options: OrderWriterOptions) {
    this.#options = options;
    this.mode = options.mode ?? 'outbox';
  }

  async place(request: OrderRequest, idempotencyKey?: string): Promise<PlaceOrderResult> {
    const { prisma, faults } = this.#options;
    const mode = this.mode; // one mode per request, even if the demo switches meanwhile
    if (mode === 'outbox' && !faults?.killBetweenWritesAt && !faults?.failCommitEvery)
      return this.#options.batches
        ? this.#options.batches.place(request, idempotencyKey)
        : placeOrder(prisma, request, idempotencyKey);
    let written = 0;
    const result = await prisma.$transaction(async (tx) => {
      const claim = keyClaim(request, idempotencyKey);
      // The outbox mode (here only for its fault points) writes as production does; the naive
      // ones write the order alone and send its event themselves.
      const insert = mode === 'outbox' ? undefined : insertOrderAlone;
      const result = await writeOrder(tx, catalogPricesOf(prisma), randomUUID(), request, claim, insert);
      if (result.kind !== 'created') return result;
      written = this.#written();
      if (mode === 'publish-then-commit') {
        await this.#publisher().send(result.event, result.order.createdAt); // out, the order not yet committed
        this.#killFault(written, mode);
      }
      this.#failCommitFault(written);
      return result;
    });
    if (result.kind !== 'created') return result;
    // outbox: the "second write" is the relay's publish, which no longer depends on this process.
    if (mode !== 'publish-then-commit') this.#killFault(written, mode);
    // commit-then-publish: the order is committed, its event not yet sent.
    if (mode === 'commit-then-publish') await this.#publisher().send(result.event, result.order.createdAt);
    return result;
  }

  #publisher(): NaivePublisher {
    const { publisher } = this.#options;
    if (!publisher) throw new Error(`write mode ${this.mode} needs a Kafka publisher in the orders process`);
    return publisher;
  }

  /** Counts the orders written (each reaching COMMIT or not): the fault points' clock. */
  #written(): number {
    this.#ordersWritten += 1;
    return this.#ordersWritten;
  }

  #killFault(written: number, mode: WriteMode): void {
    // At the n-th order, or the first one after it that gets between its writes (the n-th's send
    // may have failed): the process dies there anyway.
    const at = this.#options.faults?.killBetweenWritesAt ?? 0;
    if (at === 0 || written < at) return;
    this.#options.logger?.warn(
      { mode, written },
      'FAULT_KILL_BETWEEN_WRITES_AT: kill -9 between the two writes',
    );
    process.kill(process.pid, 'SIGKILL');
  }

  #failCommitFault(written: number): void {
    const every = this.#options.faults?.failCommitEvery ?? 0;
    if (every > 0 && written % every === 0) {
      throw new Error(`FAULT_FAIL_COMMIT_EVERY=${every}: this order's transaction fails before COMMIT`);
    }
  }
}
