/**
 * The variants measured side by side: today's production write (placeOrder, F1), the same write
 * without its outbox row (F0), and the write paths it replaced (bench/write-path/baselines.ts).
 */
import { randomUUID } from 'node:crypto';
import {
  type CreatedOrder,
  catalogPricesOf,
  EVENT_SOURCE,
  insertOrderAlone,
  newOrder,
  type OrderRequest,
  orderCreated,
  type Prisma,
  placeOrder,
} from '@outbox/orders';
import {
  businessAndWriteEventUntilNow,
  businessOneStatementUntilNow,
  createOrderWithPrismaUntilNow,
  placeOrderUntilNow,
  writeEventStatementCopySql,
} from './baselines.ts';
import { params } from './params.ts';

export type VariantKey =
  | 'A'
  | 'R'
  | 'B'
  | 'C'
  | 'D'
  | 'E0'
  | 'E1'
  | 'E1K'
  | 'F0'
  | 'F1'
  | 'F1K'
  | 'F1N'
  | 'F1T';
export type Variant = {
  key: VariantKey;
  label: string;
  /** Statements sent per transaction, BEGIN and COMMIT included. */
  roundTrips: number;
  /** C runs with the NOTIFY trigger disabled; every other variant with it enabled. */
  notifyTrigger?: false;
  /**
   * F1T runs with migration 005's traceparent trigger (what the CDC relay needs) disabled; every
   * other variant with it enabled, as production runs whichever relay mode it uses.
   */
  traceparentTrigger?: false;
  run(prisma: Prisma, request: OrderRequest): Promise<unknown>;
};

/**
 * F0: today's business write alone: production's own statement without its outbox CTE (the one
 * the naive write modes run, insertOrderAlone); priced as placeOrder prices (from the catalog as
 * last read). F1 ÷ F0 is the outbox row's cost in today's write path.
 */
export const businessPricedInStatement = (prisma: Prisma, request: OrderRequest) =>
  prisma.$transaction(async (tx): Promise<CreatedOrder> => {
    const pricing = await catalogPricesOf(prisma).price(tx, request, false);
    const outcome = await insertOrderAlone(
      tx,
      newOrder(randomUUID(), request, pricing.lines),
      undefined,
      undefined,
    );
    if (!outcome.written) throw new Error('F0 wrote nothing');
    return outcome.order;
  });

export const allVariants: Variant[] = [
  {
    key: 'A',
    label: 'before: business only (Prisma create)',
    roundTrips: 7,
    run: (prisma, request) =>
      prisma.$transaction((tx) => createOrderWithPrismaUntilNow(tx, request, randomUUID())),
  },
  {
    key: 'R',
    label: 'A + one empty statement (select 1)',
    roundTrips: 8,
    run: (prisma, request) =>
      prisma.$transaction(async (tx) => {
        const order = await createOrderWithPrismaUntilNow(tx, request, randomUUID());
        await tx.$queryRawUnsafe('select 1');
        return order;
      }),
  },
  {
    key: 'B',
    label: 'before: A + writeEvent (production until now)',
    roundTrips: 8,
    run: businessAndWriteEventUntilNow,
  },
  {
    key: 'C',
    label: 'B, NOTIFY trigger disabled',
    roundTrips: 8,
    notifyTrigger: false,
    run: businessAndWriteEventUntilNow,
  },
  {
    key: 'D',
    label: 'B, outbox INSERT without zod/trace',
    roundTrips: 8,
    run: (prisma, request) =>
      prisma.$transaction(async (tx) => {
        const order = await createOrderWithPrismaUntilNow(tx, request, randomUUID());
        const event = orderCreated(order);
        await tx.$queryRawUnsafe(
          writeEventStatementCopySql,
          randomUUID(),
          EVENT_SOURCE,
          event.aggregateType,
          event.aggregateId,
          event.type,
          event.schemaVersion,
          JSON.stringify(event.data),
          '{}',
        );
        return order;
      }),
  },
  {
    key: 'E0',
    label: 'until now: business only, lookup + order+items in 1 statement',
    roundTrips: 4,
    run: (prisma, request) => prisma.$transaction((tx) => businessOneStatementUntilNow(tx, request)),
  },
  {
    key: 'E1',
    label: 'until now: placeOrder, lookup + order+items+outbox in 1 statement',
    roundTrips: 4,
    run: (prisma, request) => placeOrderUntilNow(prisma, request),
  },
  {
    key: 'E1K',
    label: 'until now: E1 with an Idempotency-Key (claim, lookup, write)',
    roundTrips: 5,
    run: (prisma, request) => placeOrderUntilNow(prisma, request, randomUUID()),
  },
  {
    key: 'F0',
    label: "now: business only, F1's statement with no event (priced+key+order+items)",
    roundTrips: 3,
    run: businessPricedInStatement,
  },
  {
    key: 'F1',
    label: 'now: placeOrder (production), F0 + outbox row in that statement',
    roundTrips: 3,
    run: (prisma, request) => expectCreated(placeOrder(prisma, request)),
  },
  {
    key: 'F1K',
    label: 'now: F1 with an Idempotency-Key (claimed in that statement)',
    roundTrips: 3,
    run: (prisma, request) => expectCreated(placeOrder(prisma, request, randomUUID())),
  },
  {
    key: 'F1N',
    label: 'F1, NOTIFY trigger disabled',
    roundTrips: 3,
    notifyTrigger: false,
    run: (prisma, request) => expectCreated(placeOrder(prisma, request)),
  },
  {
    key: 'F1T',
    label: 'F1, traceparent trigger (migration 005, for CDC) disabled',
    roundTrips: 3,
    traceparentTrigger: false,
    run: (prisma, request) => expectCreated(placeOrder(prisma, request)),
  },
];

/** A benchmark that silently measured refusals would measure nothing: every order must be created. */
export async function expectCreated(result: ReturnType<typeof placeOrder>) {
  const outcome = await result;
  if (outcome.kind !== 'created') throw new Error(`placeOrder answered ${outcome.kind}`);
  return outcome.order;
}

export const variants = params.variants.map((key) => {
  const variant = allVariants.find((v) => v.key === key);
  if (!variant) throw new Error(`unknown variant ${key}; known: ${allVariants.map((v) => v.key).join(',')}`);
  return variant;
});
if (!variants.some((v) => v.key === 'A') || !variants.some((v) => v.key === 'B')) {
  throw new Error('--variants must include A and B (the baselines)');
}
