/**
 * Write-path benchmark: what does the outbox write add to the orders business transaction?
 *
 *   node bench/write-path.ts [--runs 1] [--rounds 15] [--iterations 150] [--tx 400]
 *                            [--concurrency 8,32] [--warmup 100]
 *                            [--variants A,R,B,C,D,E0,E1,E1K,F0,F1,F1K,F1N] [--out bench/results/write-path]
 *
 * Every run gets a fresh database (createTestDatabase + the real orders migrations) and the real
 * PrismaClient (createPrisma, i.e. the production pool of 10 connections). Variants are
 * interleaved: each round runs every variant once, in an order that rotates from round to round,
 * so drift in machine load hits all of them alike. Ratios are computed per round (paired) and the
 * median over rounds is reported; with --runs N the median of the per-run ratios is reported too.
 * Before the warm-up, each variant's statements per transaction are counted (node-postgres'
 * Client#query, which the Prisma adapter sends every statement through, BEGIN and COMMIT included)
 * and reported beside the declared figure.
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createTestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import {
  type CreatedOrder,
  catalogPricesOf,
  createPrisma,
  EVENT_SOURCE,
  migrate,
  newOrder,
  type OrderRequest,
  orderCreated,
  type Prisma,
  placeOrder,
  requestHash,
  type Tx,
} from '@outbox/orders';
import { prepareEvent, writeEvent } from '@outbox/outbox';
import pg from 'pg';
import { positiveInt } from './support/args.ts';
import { loadavg, machineInfo, postgresInfo } from './support/environment.ts';

// ---------------------------------------------------------------------------------------------
// Parameters

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '15' },
    iterations: { type: 'string', default: '150' },
    tx: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '8,32' },
    warmup: { type: 'string', default: '100' },
    variants: { type: 'string', default: 'A,R,B,C,D,E0,E1,E1K,F0,F1,F1K,F1N' },
    out: { type: 'string', default: 'bench/results/write-path' },
  },
});

const params = {
  runs: positiveInt('runs', args.runs),
  rounds: positiveInt('rounds', args.rounds),
  /** Transactions per variant per round at concurrency 1 (latency). */
  iterations: positiveInt('iterations', args.iterations),
  /** Transactions per variant per round at each higher concurrency (throughput). */
  txPerThroughputRound: positiveInt('tx', args.tx),
  concurrency: args.concurrency.split(',').map((c) => positiveInt('concurrency', c)),
  warmup: positiveInt('warmup', args.warmup),
  variants: args.variants.split(','),
  prismaPoolSize: 10, // createPrisma passes no `max`, so node-postgres' default pool of 10 applies
};

// ---------------------------------------------------------------------------------------------
// Variants

type VariantKey = 'A' | 'R' | 'B' | 'C' | 'D' | 'E0' | 'E1' | 'E1K' | 'F0' | 'F1' | 'F1K' | 'F1N';
type Variant = {
  key: VariantKey;
  label: string;
  /** Statements sent per transaction, BEGIN and COMMIT included. */
  roundTrips: number;
  /** C runs with the NOTIFY trigger disabled; every other variant with it enabled. */
  notifyTrigger: boolean;
  run(prisma: Prisma, request: OrderRequest): Promise<unknown>;
};

/** Exactly what writeEvent sends, minus the zod validation and the trace-context injection. */
const insertEventSql = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
  values ($1::uuid, $2, $3, $4, $5, $6::int, $7::jsonb, $8::jsonb)
  returning id`;

/** Order + items in one statement, without the outbox row (E0: the business write alone). */
const insertOrderSql = `
  with o as (
    insert into orders (id, customer_id, currency, status, total_cents)
    values ($1::uuid, $2, $3, 'PENDING', $4::bigint)
    returning id
  ), i as (
    insert into order_items (order_id, sku, quantity, unit_price_cents)
    select o.id, l.sku, l.quantity, l.unit_price_cents
    from o, unnest($5::text[], $6::int[], $7::bigint[]) as l (sku, quantity, unit_price_cents)
  )
  select id from o`;

/**
 * The catalog lookup of the write path as it was until the key claim and the pricing joined the
 * write statement (E variants): one statement before the write, every order.
 */
async function priceLinesUntilNow(tx: Tx, request: OrderRequest) {
  const products = await tx.$queryRawUnsafe<{ sku: string; currency: string; unit_price_cents: bigint }[]>(
    'select sku, currency, unit_price_cents from products where sku = any($1::text[])',
    request.items.map((item) => item.sku),
  );
  const bySku = new Map(products.map((product) => [product.sku, product]));
  return request.items.map((item) => {
    const product = bySku.get(item.sku);
    if (!product || product.currency !== request.currency) throw new Error(`cannot order ${item.sku}`);
    return { sku: item.sku, quantity: item.quantity, unitPriceCents: BigInt(product.unit_price_cents) };
  });
}

/** E0: the E business write (lookup, then order + items in one statement) without the outbox row. */
async function businessOneStatement(tx: Tx, request: OrderRequest) {
  const order = newOrder(randomUUID(), request, await priceLinesUntilNow(tx, request));
  await tx.$queryRawUnsafe(
    insertOrderSql,
    order.id,
    order.customerId,
    order.currency,
    order.totalCents.toString(),
    order.items.map((item) => item.sku),
    order.items.map((item) => item.quantity),
    order.items.map((item) => item.unitPriceCents.toString()),
  );
  return order;
}

/** E1's write statement, as production sent it until now: order, items and outbox row. */
const insertOrderAndEventUntilNow = `
  with o as (
    insert into orders (id, customer_id, currency, status, total_cents)
    values ($1::uuid, $2, $3, 'PENDING', $4::bigint)
    returning id, created_at
  ), i as (
    insert into order_items (order_id, sku, quantity, unit_price_cents)
    select o.id, l.sku, l.quantity, l.unit_price_cents
    from o, unnest($5::text[], $6::int[], $7::bigint[]) as l (sku, quantity, unit_price_cents)
  ), e as (
    insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
    select $8::uuid, $9, $10, $11, $12, $13::int, $14::jsonb, $15::jsonb
    from o
  )
  select created_at from o`;

/**
 * E1 / E1K: placeOrder as it was until now: with a key, its claim first (a statement of its own),
 * then the catalog lookup, then order + items + outbox row in one statement.
 */
async function placeOrderUntilNow(prisma: Prisma, request: OrderRequest, idempotencyKey?: string) {
  return prisma.$transaction(async (tx) => {
    const orderId = randomUUID();
    if (idempotencyKey !== undefined) {
      const claimed = await tx.$queryRawUnsafe<unknown[]>(
        `insert into idempotency_keys (key, request_hash, order_id) values ($1, $2, $3::uuid)
         on conflict (key) do nothing returning key`,
        idempotencyKey,
        requestHash(request),
        orderId,
      );
      if (claimed.length === 0) throw new Error('bench keys are never reused');
    }
    const order = newOrder(orderId, request, await priceLinesUntilNow(tx, request));
    const event = prepareEvent(EVENT_SOURCE, orderCreated(order));
    await tx.$queryRawUnsafe(
      insertOrderAndEventUntilNow,
      order.id,
      order.customerId,
      order.currency,
      order.totalCents.toString(),
      order.items.map((item) => item.sku),
      order.items.map((item) => item.quantity),
      order.items.map((item) => item.unitPriceCents.toString()),
      event.id,
      event.source,
      event.aggregateType,
      event.aggregateId,
      event.eventType,
      event.schemaVersion,
      event.payload,
      event.headers,
    );
    return order;
  });
}

/**
 * F0: production's write statement (apps/orders/src/orders/createOrder.ts) WITHOUT its outbox
 * CTE: the same guard on the catalog's prices, key claim (none here), order and items. Keep it in
 * step with production: F1 ÷ F0 is the outbox row's cost in today's write path.
 */
const insertPricedOrderSql = `
  with line (sku, quantity, unit_price_cents) as (
    select * from unnest($5::text[], $6::int[], $7::bigint[])
  ), priced as (
    select line.sku
    from line
    join products p
      on p.sku = line.sku and p.currency = $3::char(3) and p.unit_price_cents = line.unit_price_cents
  ), guard as (
    select count(*) = cardinality($5::text[]) as all_priced from priced
  ), claim as (
    insert into idempotency_keys (key, request_hash, order_id)
    select $8::text, $9::text, $1::uuid
    from guard
    where guard.all_priced and $8::text is not null
    on conflict (key) do nothing
    returning key
  ), o as (
    insert into orders (id, customer_id, currency, status, total_cents)
    select $1::uuid, $2::text, $3::char(3), 'PENDING', $4::bigint
    from guard
    where guard.all_priced and ($8::text is null or exists (select 1 from claim))
    returning id, created_at
  ), i as (
    insert into order_items (order_id, sku, quantity, unit_price_cents)
    select o.id, line.sku, line.quantity, line.unit_price_cents
    from o, line
  )
  select guard.all_priced, exists (select 1 from claim) as key_claimed, o.created_at
  from guard
  left join o on true`;

/** F0: today's business write alone, priced as placeOrder prices (from the catalog as last read). */
const businessPricedInStatement = (prisma: Prisma, request: OrderRequest) =>
  prisma.$transaction(async (tx): Promise<CreatedOrder> => {
    const pricing = await catalogPricesOf(prisma).price(tx, request, false);
    const order = newOrder(randomUUID(), request, pricing.lines);
    const [row] = await tx.$queryRawUnsafe<{ created_at: Date | null }[]>(
      insertPricedOrderSql,
      order.id,
      order.customerId,
      order.currency,
      order.totalCents.toString(),
      order.items.map((item) => item.sku),
      order.items.map((item) => item.quantity),
      order.items.map((item) => item.unitPriceCents.toString()),
      null,
      null,
    );
    if (!row?.created_at) throw new Error('F0 wrote nothing');
    return order;
  });

/**
 * The orders write path as it was until the one-statement write (kept here as the baseline):
 * Prisma `findMany` on products, then `order.create` with nested items and `include: { items: true }`.
 */
async function createOrder(tx: Tx, request: OrderRequest, orderId: string) {
  const products = await tx.product.findMany({ where: { sku: { in: request.items.map((i) => i.sku) } } });
  const bySku = new Map(products.map((product) => [product.sku, product]));
  const lines = request.items.map((item) => {
    const product = bySku.get(item.sku);
    if (!product || product.currency !== request.currency) throw new Error(`cannot order ${item.sku}`);
    return { sku: item.sku, quantity: item.quantity, unitPriceCents: product.unitPriceCents };
  });
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

const businessAndOutbox = (prisma: Prisma, request: OrderRequest) =>
  prisma.$transaction(async (tx) => {
    const order = await createOrder(tx, request, randomUUID());
    await writeEvent(tx, EVENT_SOURCE, orderCreated(order));
    return order;
  });

const allVariants: Variant[] = [
  {
    key: 'A',
    label: 'before: business only (Prisma create)',
    roundTrips: 7,
    notifyTrigger: true,
    run: (prisma, request) => prisma.$transaction((tx) => createOrder(tx, request, randomUUID())),
  },
  {
    key: 'R',
    label: 'A + one empty statement (select 1)',
    roundTrips: 8,
    notifyTrigger: true,
    run: (prisma, request) =>
      prisma.$transaction(async (tx) => {
        const order = await createOrder(tx, request, randomUUID());
        await tx.$queryRawUnsafe('select 1');
        return order;
      }),
  },
  {
    key: 'B',
    label: 'before: A + writeEvent (production until now)',
    roundTrips: 8,
    notifyTrigger: true,
    run: businessAndOutbox,
  },
  {
    key: 'C',
    label: 'B, NOTIFY trigger disabled',
    roundTrips: 8,
    notifyTrigger: false,
    run: businessAndOutbox,
  },
  {
    key: 'D',
    label: 'B, outbox INSERT without zod/trace',
    roundTrips: 8,
    notifyTrigger: true,
    run: (prisma, request) =>
      prisma.$transaction(async (tx) => {
        const order = await createOrder(tx, request, randomUUID());
        const event = orderCreated(order);
        await tx.$queryRawUnsafe(
          insertEventSql,
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
    notifyTrigger: true,
    run: (prisma, request) => prisma.$transaction((tx) => businessOneStatement(tx, request)),
  },
  {
    key: 'E1',
    label: 'until now: placeOrder, lookup + order+items+outbox in 1 statement',
    roundTrips: 4,
    notifyTrigger: true,
    run: (prisma, request) => placeOrderUntilNow(prisma, request),
  },
  {
    key: 'E1K',
    label: 'until now: E1 with an Idempotency-Key (claim, lookup, write)',
    roundTrips: 5,
    notifyTrigger: true,
    run: (prisma, request) => placeOrderUntilNow(prisma, request, randomUUID()),
  },
  {
    key: 'F0',
    label: 'now: business only, priced+key+order+items in 1 statement',
    roundTrips: 3,
    notifyTrigger: true,
    run: businessPricedInStatement,
  },
  {
    key: 'F1',
    label: 'now: placeOrder (production), F0 + outbox row in that statement',
    roundTrips: 3,
    notifyTrigger: true,
    run: (prisma, request) => expectCreated(placeOrder(prisma, request)),
  },
  {
    key: 'F1K',
    label: 'now: F1 with an Idempotency-Key (claimed in that statement)',
    roundTrips: 3,
    notifyTrigger: true,
    run: (prisma, request) => expectCreated(placeOrder(prisma, request, randomUUID())),
  },
  {
    key: 'F1N',
    label: 'F1, NOTIFY trigger disabled',
    roundTrips: 3,
    notifyTrigger: false,
    run: (prisma, request) => expectCreated(placeOrder(prisma, request)),
  },
];

/** A benchmark that silently measured refusals would measure nothing: every order must be created. */
async function expectCreated(result: ReturnType<typeof placeOrder>) {
  const outcome = await result;
  if (outcome.kind !== 'created') throw new Error(`placeOrder answered ${outcome.kind}`);
  return outcome.order;
}

const variants = params.variants.map((key) => {
  const variant = allVariants.find((v) => v.key === key);
  if (!variant) throw new Error(`unknown variant ${key}; known: ${allVariants.map((v) => v.key).join(',')}`);
  return variant;
});
if (!variants.some((v) => v.key === 'A') || !variants.some((v) => v.key === 'B')) {
  throw new Error('--variants must include A and B (the baselines)');
}

// ---------------------------------------------------------------------------------------------
// Workload: the same fixed sequence of orders for every variant (1 to 3 lines from the seed catalog).

const SKUS = ['KB-101', 'MS-202', 'MN-303', 'HD-404', 'CB-505'];
const requests: OrderRequest[] = Array.from({ length: 60 }, (_, i) => {
  const lines = 1 + (i % 3);
  return {
    customerId: `bench-customer-${i % 7}`,
    currency: 'EUR',
    items: Array.from({ length: lines }, (_, j) => ({
      sku: SKUS[(i + j * 2) % SKUS.length] as string,
      quantity: 1 + ((i + j) % 4),
    })),
  };
});

// ---------------------------------------------------------------------------------------------
// Statistics

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = sorted(xs);
  // nearest rank
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
}
const median = (xs: number[]) => {
  if (xs.length === 0) return Number.NaN;
  const s = sorted(xs);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

// ---------------------------------------------------------------------------------------------
// Measurement

type LatencyRound = { round: number; variant: VariantKey; n: number; medianMs: number; p99Ms: number };
type ThroughputRound = {
  round: number;
  variant: VariantKey;
  concurrency: number;
  n: number;
  elapsedMs: number;
  txPerSec: number;
  medianLatencyMs: number;
};

let requestCursor = 0;
const nextRequest = () => requests[requestCursor++ % requests.length] as OrderRequest;

async function runLatency(prisma: Prisma, variant: Variant, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const request = nextRequest();
    const start = process.hrtime.bigint();
    await variant.run(prisma, request);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
}

async function runThroughput(prisma: Prisma, variant: Variant, concurrency: number, n: number) {
  let issued = 0;
  const latencies: number[] = [];
  const worker = async () => {
    while (issued < n) {
      issued++;
      const request = nextRequest();
      const start = process.hrtime.bigint();
      await variant.run(prisma, request);
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  return { elapsedMs, txPerSec: (n / elapsedMs) * 1000, medianLatencyMs: median(latencies) };
}

/**
 * Statements per transaction as sent: node-postgres' Client#query calls (every statement of the
 * Prisma adapter, BEGIN and COMMIT included) over `n` transactions one after another, after a
 * pass over the whole request sequence that is not counted (it reads the catalog, opens a connection).
 */
async function countStatements(prisma: Prisma, variant: Variant, n: number): Promise<number> {
  for (let i = 0; i < requests.length; i++) await variant.run(prisma, nextRequest());
  let sent = 0;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    sent++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    for (let i = 0; i < n; i++) await variant.run(prisma, nextRequest());
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent / n;
}

/** Toggle the NOTIFY trigger. ALTER TABLE takes a lock on outbox, so only ever between variants. */
async function setNotifyTrigger(admin: pg.Client, enabled: boolean) {
  await admin.query(
    `alter table outbox ${enabled ? 'enable' : 'disable'} trigger outbox_notify_after_insert`,
  );
}

/** Rotate the variant order each round so no variant always runs first (or right after C). */
const orderFor = (round: number) =>
  variants.map((_, i) => variants[(i + round) % variants.length] as Variant);

type RunResult = {
  run: number;
  database: string;
  durationSec: number;
  loadavgBefore: number[];
  loadavgAfter: number[];
  notificationsReceived: number;
  /** Notifications the LISTEN connection received while each variant ran (warm-up included). */
  notificationsByVariant: Record<string, number>;
  /** Statements per transaction each variant sent, counted (see countStatements). */
  statementsPerTx: Record<string, number>;
  rows: { orders: number; outbox: number };
  latencyRounds: LatencyRound[];
  throughputRounds: ThroughputRound[];
  summary: RunSummary;
};

async function benchmarkRun(run: number): Promise<RunResult> {
  const startedAt = Date.now();
  const loadavgBefore = loadavg();
  const db = await createTestDatabase('bench_write_path');
  const admin = new pg.Client({ connectionString: db.url });
  const listener = new pg.Client({ connectionString: db.url });
  let prisma: Prisma | undefined;
  try {
    await migrate(db.url);
    await admin.connect();
    // Like a relay: one connection LISTENs on the channel and consumes what the trigger sends.
    await listener.connect();
    let notificationsReceived = 0;
    listener.on('notification', () => {
      notificationsReceived++;
    });
    await listener.query('listen outbox');
    prisma = createPrisma(db.url);

    // One variant's stretch of work: the trigger set as the variant wants it, and a count of the
    // notifications it caused (a sanity check: C must cause none, B one per transaction).
    const notificationsByVariant: Record<string, number> = {};
    const settle = async () => {
      await sleep(20);
      await listener.query('select 1');
    };
    const segment = async <T>(variant: Variant, fn: () => Promise<T>): Promise<T> => {
      if (!variant.notifyTrigger) await setNotifyTrigger(admin, false);
      const before = notificationsReceived;
      try {
        return await fn();
      } finally {
        if (!variant.notifyTrigger) await setNotifyTrigger(admin, true);
        await settle();
        notificationsByVariant[variant.key] =
          (notificationsByVariant[variant.key] ?? 0) + notificationsReceived - before;
      }
    };

    const statementsPerTx: Record<string, number> = {};
    for (const variant of variants) {
      statementsPerTx[variant.key] = round(await countStatements(prisma, variant, 20), 2);
    }
    log(`run ${run}: statements per transaction ${JSON.stringify(statementsPerTx)}`);

    log(`run ${run}: warm-up (${params.warmup} tx per variant at c=1, then ${params.warmup} at c=8)`);
    for (const variant of variants) {
      await segment(variant, async () => {
        await runLatency(prisma as Prisma, variant, params.warmup);
        await runThroughput(prisma as Prisma, variant, 8, params.warmup);
      });
    }
    await admin.query('vacuum analyze');

    const latencyRounds: LatencyRound[] = [];
    const throughputRounds: ThroughputRound[] = [];
    const pooled = new Map<VariantKey, number[]>();
    for (let r = 0; r < params.rounds; r++) {
      for (const variant of orderFor(r)) {
        await segment(variant, async () => {
          const samples = await runLatency(prisma as Prisma, variant, params.iterations);
          pooled.set(variant.key, [...(pooled.get(variant.key) ?? []), ...samples]);
          latencyRounds.push({
            round: r,
            variant: variant.key,
            n: samples.length,
            medianMs: round(median(samples), 4),
            p99Ms: round(quantile(samples, 0.99), 4),
          });
        });
      }
      for (const concurrency of params.concurrency) {
        for (const variant of orderFor(r)) {
          await segment(variant, async () => {
            const result = await runThroughput(
              prisma as Prisma,
              variant,
              concurrency,
              params.txPerThroughputRound,
            );
            throughputRounds.push({
              round: r,
              variant: variant.key,
              concurrency,
              n: params.txPerThroughputRound,
              elapsedMs: round(result.elapsedMs, 1),
              txPerSec: round(result.txPerSec, 1),
              medianLatencyMs: round(result.medianLatencyMs, 3),
            });
          });
        }
      }
      const a = latencyRounds.find((x) => x.round === r && x.variant === 'A');
      const b = latencyRounds.find((x) => x.round === r && x.variant === 'B');
      log(
        `run ${run}: round ${r + 1}/${params.rounds} done (c=1 median A ${a?.medianMs} ms, B ${b?.medianMs} ms)`,
      );
    }

    const [counts] = (
      await admin.query<{ orders: number; outbox: number }>(
        'select (select count(*) from orders)::int as orders, (select count(*) from outbox)::int as outbox',
      )
    ).rows;
    return {
      run,
      database: db.name,
      durationSec: round((Date.now() - startedAt) / 1000, 1),
      loadavgBefore,
      loadavgAfter: loadavg(),
      notificationsReceived,
      notificationsByVariant,
      statementsPerTx,
      rows: counts ?? { orders: 0, outbox: 0 },
      latencyRounds,
      throughputRounds,
      summary: summarizeRun(latencyRounds, throughputRounds, pooled),
    };
  } finally {
    await prisma?.$disconnect();
    await listener.end().catch(() => {});
    await admin.end().catch(() => {});
    await db.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// Summaries

type VariantLatency = { medianMs: number; p99Ms: number; pooledMedianMs: number };
type RunSummary = {
  latency: Record<string, VariantLatency>;
  throughput: Record<string, Record<string, number>>; // concurrency -> variant -> median tx/s
  /** Paired per-round ratios, median over rounds (p99: ratio of the pooled p99s). */
  ratios: Record<string, number>;
};

/** The comparisons reported: [name, variant, baseline]. */
const comparisons: [string, VariantKey, VariantKey][] = [
  ['B/A', 'B', 'A'], // outbox overhead, as production writes it
  ['R/A', 'R', 'A'], // cost of one more (empty) round trip
  ['B/R', 'B', 'R'], // the outbox INSERT beyond a bare round trip
  ['C/A', 'C', 'A'],
  ['B/C', 'B', 'C'], // cost of the NOTIFY trigger
  ['D/A', 'D', 'A'],
  ['D/B', 'D', 'B'], // cost of zod validation + trace injection
  ['E0/A', 'E0', 'A'],
  ['E1/E0', 'E1', 'E0'], // outbox overhead when the row rides in the business statement
  ['E1/A', 'E1', 'A'],
  ['E1/B', 'E1', 'B'],
  ['F1/F0', 'F1', 'F0'], // outbox overhead in today's production path
  ['F0/E0', 'F0', 'E0'], // the business write with pricing and key claim folded in
  ['F1/E1', 'F1', 'E1'], // today's production path vs the one until now
  ['F1K/E1K', 'F1K', 'E1K'], // the same, with an Idempotency-Key
  ['F1/A', 'F1', 'A'],
  ['F1/F1N', 'F1', 'F1N'], // the NOTIFY trigger in today's production path
  ['F1N/F0', 'F1N', 'F0'], // the outbox row without its NOTIFY
];

function summarizeRun(
  latencyRounds: LatencyRound[],
  throughputRounds: ThroughputRound[],
  pooled: Map<VariantKey, number[]>,
): RunSummary {
  const latency: Record<string, VariantLatency> = {};
  for (const variant of variants) {
    const rounds = latencyRounds.filter((x) => x.variant === variant.key);
    const samples = pooled.get(variant.key) ?? [];
    latency[variant.key] = {
      medianMs: round(median(rounds.map((x) => x.medianMs)), 4),
      p99Ms: round(quantile(samples, 0.99), 4),
      pooledMedianMs: round(median(samples), 4),
    };
  }
  const throughput: Record<string, Record<string, number>> = {};
  for (const concurrency of params.concurrency) {
    const perVariant: Record<string, number> = {};
    for (const variant of variants) {
      const rounds = throughputRounds.filter(
        (x) => x.variant === variant.key && x.concurrency === concurrency,
      );
      perVariant[variant.key] = round(median(rounds.map((x) => x.txPerSec)), 1);
    }
    throughput[concurrency] = perVariant;
  }
  const ratios: Record<string, number> = {};
  const has = (key: VariantKey) => variants.some((v) => v.key === key);
  for (const [name, x, y] of comparisons) {
    if (!has(x) || !has(y)) continue;
    const perRound = (metric: (round: number, key: VariantKey) => number | undefined) =>
      median(
        Array.from({ length: params.rounds }, (_, r) => {
          const num = metric(r, x);
          const den = metric(r, y);
          return num === undefined || den === undefined ? Number.NaN : num / den;
        }).filter((v) => !Number.isNaN(v)),
      );
    ratios[`latencyMedian ${name}`] = round(
      perRound((r, k) => latencyRounds.find((l) => l.round === r && l.variant === k)?.medianMs),
      4,
    );
    ratios[`latencyP99 ${name}`] = round(
      (latency[x]?.p99Ms ?? Number.NaN) / (latency[y]?.p99Ms ?? Number.NaN),
      4,
    );
    for (const concurrency of params.concurrency) {
      ratios[`throughput c=${concurrency} ${name}`] = round(
        perRound(
          (r, k) =>
            throughputRounds.find((t) => t.round === r && t.variant === k && t.concurrency === concurrency)
              ?.txPerSec,
        ),
        4,
      );
    }
  }
  return { latency, throughput, ratios };
}

/** Median over runs of each per-run ratio. */
function acrossRuns(runs: RunResult[]): Record<string, { median: number; perRun: number[] }> {
  const out: Record<string, { median: number; perRun: number[] }> = {};
  for (const name of Object.keys(runs[0]?.summary.ratios ?? {})) {
    const perRun = runs.map((r) => r.summary.ratios[name] ?? Number.NaN);
    out[name] = { median: round(median(perRun), 4), perRun };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reporting

const pct = (ratio: number | undefined) =>
  ratio === undefined || Number.isNaN(ratio)
    ? 'n/a'
    : `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

function markdownReport(result: Report): string {
  const last = result.runs[result.runs.length - 1] as RunResult;
  const ratio = (name: string) => result.acrossRuns[name]?.median;
  const runsNote =
    result.runs.length > 1
      ? `median of the per-run ratios over ${result.runs.length} runs`
      : 'single run (use --runs 3 for a median over runs)';
  const lines: string[] = [];
  lines.push('# Write-path benchmark results', '');
  lines.push(
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}, fsync=${result.postgres.fsync}) · Prisma pool ${params.prismaPoolSize}`,
    '',
    `Parameters: ${params.runs} run(s) × ${params.rounds} rounds; per round and variant ${params.iterations} tx at c=1 and ${params.txPerThroughputRound} tx at each c in {${params.concurrency.join(', ')}}; warm-up ${params.warmup}.`,
    '',
  );
  lines.push(`## Ratios vs baseline (${runsNote})`, '');
  const header = ['comparison', 'c=1 median latency', 'c=1 p99 latency'];
  for (const c of params.concurrency) header.push(`c=${c} throughput`);
  lines.push(`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`);
  for (const [name] of comparisons) {
    if (ratio(`latencyMedian ${name}`) === undefined) continue;
    const cells = [name, pct(ratio(`latencyMedian ${name}`)), pct(ratio(`latencyP99 ${name}`))];
    for (const c of params.concurrency) cells.push(pct(ratio(`throughput c=${c} ${name}`)));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    'Latency: + means slower. Throughput: − means fewer transactions per second.',
    '',
    `## Absolute figures (run ${last.run} of ${result.runs.length}: median over rounds; p99 pooled over ${params.rounds * params.iterations} tx)`,
    '',
  );
  const head2 = ['variant', 'statements/tx (counted)', 'c=1 median ms', 'c=1 p99 ms'];
  for (const c of params.concurrency) head2.push(`c=${c} tx/s`);
  lines.push(`| ${head2.join(' | ')} |`, `|${head2.map(() => '---').join('|')}|`);
  for (const variant of variants) {
    const lat = last.summary.latency[variant.key];
    const cells = [
      `${variant.key}: ${variant.label}`,
      `${variant.roundTrips} (${last.statementsPerTx[variant.key] ?? 'n/a'})`,
      lat?.medianMs.toFixed(2) ?? 'n/a',
      lat?.p99Ms.toFixed(2) ?? 'n/a',
    ];
    for (const c of params.concurrency)
      cells.push(last.summary.throughput[c]?.[variant.key]?.toFixed(0) ?? 'n/a');
    lines.push(`| ${cells.join(' | ')} |`);
  }
  if (result.runs.length > 1) {
    lines.push('', '## Per-run ratios', '', '| ratio | per run | median |', '|---|---|---|');
    for (const [name, value] of Object.entries(result.acrossRuns)) {
      lines.push(
        `| ${name} | ${value.perRun.map((v) => v.toFixed(3)).join(', ')} | ${value.median.toFixed(3)} |`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}

type Report = {
  benchmark: 'write-path';
  date: string;
  machine: {
    platform: string;
    release: string;
    arch: string;
    cpuModel: string;
    cpus: number;
    totalMemGiB: number;
  };
  node: string;
  postgres: Record<string, string>;
  parameters: typeof params;
  variants: { key: string; label: string; statementsPerTx: number; notifyTrigger: boolean }[];
  runs: RunResult[];
  acrossRuns: Record<string, { median: number; perRun: number[] }>;
};

function log(message: string) {
  process.stderr.write(`[write-path] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Main

const report: Report = {
  benchmark: 'write-path',
  date: new Date().toISOString(),
  machine: machineInfo(),
  node: process.version,
  postgres: await postgresInfo(testPostgresUrl),
  parameters: params,
  variants: variants.map((v) => ({
    key: v.key,
    label: v.label,
    statementsPerTx: v.roundTrips,
    notifyTrigger: v.notifyTrigger,
  })),
  runs: [],
  acrossRuns: {},
};

for (let run = 1; run <= params.runs; run++) {
  const result = await benchmarkRun(run);
  report.runs.push(result);
  log(`run ${run}: ${result.durationSec} s, ${result.rows.orders} orders, ${result.rows.outbox} outbox rows`);
}
report.acrossRuns = acrossRuns(report.runs);

const markdown = markdownReport(report);
mkdirSync(dirname(`${args.out}.json`), { recursive: true });
writeFileSync(`${args.out}.json`, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(`${args.out}.md`, markdown);
process.stdout.write(`\n${markdown}\n`);
log(`wrote ${args.out}.json and ${args.out}.md`);
