/** One run: a fresh database, statement counts, a warm-up, then interleaved rounds of every variant. */
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase } from '@outbox/devstack/testing/test-database';
import { createPrisma, migrate, type Prisma } from '@outbox/orders';
import pg from 'pg';
import { median, quantile, rotated, round } from '../support/stats.ts';
import { log, params } from './params.ts';
import { type LatencyRound, type RunSummary, summarizeRun, type ThroughputRound } from './summary.ts';
import { type Variant, type VariantKey, variants } from './variants.ts';
import { countStatements, runLatency, runThroughput } from './workload.ts';

/** Turn one of the outbox's triggers off or on. ALTER TABLE takes a lock on outbox, so only ever between variants. */
async function setTrigger(admin: pg.Client, trigger: string, enabled: boolean) {
  await admin.query(`alter table outbox ${enabled ? 'enable' : 'disable'} trigger ${trigger}`);
}

export type RunResult = {
  database: string;
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

export async function benchmarkRun(run: number): Promise<RunResult> {
  const db = await createTestDatabase('bench_write_path');
  const admin = new pg.Client({ connectionString: db.url });
  const listener = new pg.Client({ connectionString: db.url });
  let prisma: Prisma | undefined;
  try {
    await migrate(db.url);
    await admin.connect();
    await listener.connect();
    const notifications = await countNotificationsPerVariant(admin, listener);
    const { segment } = notifications;
    prisma = createPrisma(db.url);

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

    const { latencyRounds, throughputRounds, pooled } = await measureRounds(prisma, segment, run);

    const [counts] = (
      await admin.query<{ orders: number; outbox: number }>(
        'select (select count(*) from orders)::int as orders, (select count(*) from outbox)::int as outbox',
      )
    ).rows;
    log(`run ${run}: ${counts?.orders} orders, ${counts?.outbox} outbox rows`);
    return {
      database: db.name,
      notificationsReceived: notifications.received(),
      notificationsByVariant: notifications.byVariant,
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

/** Runs `fn` as one variant's stretch of work (its NOTIFY trigger as it wants it, its notifications counted). */
type Segment = <T>(variant: Variant, fn: () => Promise<T>) => Promise<T>;

/**
 * Like a relay: `listener` LISTENs on the channel and consumes what the trigger sends. Each variant's
 * stretch of work runs with the triggers set as the variant wants them, and counts the notifications
 * it caused (a sanity check: C must cause none, B one per transaction).
 */
async function countNotificationsPerVariant(admin: pg.Client, listener: pg.Client) {
  let received = 0;
  listener.on('notification', () => {
    received++;
  });
  await listener.query('listen outbox');
  const byVariant: Record<string, number> = {};
  const settle = async () => {
    await sleep(20);
    await listener.query('select 1');
  };
  const segment: Segment = async (variant, fn) => {
    // The NOTIFY trigger, and migration 005's traceparent trigger, as the variant wants them.
    const off = [
      ...(variant.notifyTrigger === false ? ['outbox_notify_after_insert'] : []),
      ...(variant.traceparentTrigger === false ? ['outbox_traceparent_before_insert'] : []),
    ];
    for (const trigger of off) await setTrigger(admin, trigger, false);
    const before = received;
    try {
      return await fn();
    } finally {
      for (const trigger of off) await setTrigger(admin, trigger, true);
      await settle();
      byVariant[variant.key] = (byVariant[variant.key] ?? 0) + received - before;
    }
  };
  return { segment, byVariant, received: () => received };
}

/** The measured rounds: every variant at c=1, then at each concurrency, in an order rotating per round. */
async function measureRounds(prisma: Prisma, segment: Segment, run: number) {
  const latencyRounds: LatencyRound[] = [];
  const throughputRounds: ThroughputRound[] = [];
  const pooled = new Map<VariantKey, number[]>();
  for (let r = 0; r < params.rounds; r++) {
    for (const variant of rotated(variants, r)) {
      await segment(variant, async () => {
        const samples = await runLatency(prisma, variant, params.iterations);
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
      for (const variant of rotated(variants, r)) {
        await segment(variant, async () => {
          const result = await runThroughput(prisma, variant, concurrency, params.txPerThroughputRound);
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
  return { latencyRounds, throughputRounds, pooled };
}
