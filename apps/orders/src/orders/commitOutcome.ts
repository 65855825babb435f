import type { Prisma } from '../db.ts';
import type { CreatedOrder } from './createOrder.ts';

/**
 * The connection broke after the order's COMMIT was sent, and whether the server committed could
 * not be found out in time: the order may exist now, or appear later, or never. A retry with the
 * same Idempotency-Key is safe either way (docs/design.md, "When the outcome of a commit is unknown").
 */
export class CommitOutcomeUnknown extends Error {
  readonly code = 'COMMIT_OUTCOME_UNKNOWN';
  readonly orderId: string;

  constructor(orderId: string, options: ErrorOptions) {
    super(`the commit of order ${orderId} may or may not have happened`, options);
    this.orderId = orderId;
  }
}

/** Thrown inside the check's transaction to roll back its stand-in row. */
class NeverCommitted extends Error {}

/**
 * What became of the transaction that wrote order `orderId` (order, items, event, key: all or
 * nothing) after `failure` broke its connection once COMMIT was on its way: the order as
 * committed; or `failure` rethrown when it is certain nothing was written; or CommitOutcomeUnknown.
 *
 * Not seeing the row is not enough: the server may still be running that transaction (its client
 * socket died, the backend did not notice yet, the COMMIT is still in its input). So the check,
 * on a fresh connection, inserts a stand-in row with the same primary key. The unique index makes
 * that insert wait until the other transaction has ended: a conflict means it committed; a row
 * inserted means it is over and rolled back, and the stand-in is rolled back too. The wait is
 * bounded by the pool's statement timeout; past it, or on any other failure, the outcome is unknown.
 */
export async function outcomeOfLostCommit(
  prisma: Prisma,
  orderId: string,
  failure: unknown,
): Promise<CreatedOrder> {
  try {
    return await prisma.$transaction(async (tx) => {
      const inserted = await tx.$queryRaw<{ id: string }[]>`
        insert into orders (id, customer_id, currency, status, total_cents)
        values (${orderId}::uuid, '', 'XXX', 'PENDING', 1)
        on conflict (id) do nothing
        returning id`;
      if (inserted.length > 0) throw new NeverCommitted();
      // A later statement, a newer snapshot: the committed row is visible now.
      const order = await tx.order.findUnique({ where: { id: orderId }, include: { items: true } });
      if (!order) throw new Error(`order ${orderId} conflicted, yet cannot be read`);
      return order;
    });
  } catch (err) {
    if (err instanceof NeverCommitted) throw failure;
    throw new CommitOutcomeUnknown(orderId, { cause: err });
  }
}
