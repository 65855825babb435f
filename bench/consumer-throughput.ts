/**
 * Consumer benchmark: how many events per second does one consumer apply with the dedup record
 * (processed_events), compared with a bare kafkajs consumer that only reads the same messages?
 * P is the production loop itself (startEventConsumer → runConsumer → applyChunk: eachBatch,
 * chunks of ≤ 200 events in one transaction each, set-based dedup, a handler per event, metrics,
 * a `process` span per event with tracing off), P1 the same loop with one event per transaction;
 * C10/C100/C/D are hand-written eachBatch loops kept as reference points. I and B are the real
 * services' consumers: the same loop with inventory's handlers (ORDER_CREATED → reserveStocks, a
 * batch handler, exported by apps/inventory/src/handlers.ts) on an inventory-migrated database,
 * and with billing's (billingHandlers with a PaymentProvider that never fails, waits or declines)
 * on a billing-migrated one; both on createPool/transactionOn as the apps run them.
 *
 *   node bench/consumer-throughput.ts [--runs 1] [--rounds 3] [--events 10000] [--partitions 6]
 *                                     [--variants A,V,P,P1,C100,D] (also C10, C, I, B)
 *                                     [--warmup 1000] [--out bench/results/consumer-throughput]
 *
 * One real Kafka broker (the devstack test broker) for the whole benchmark. Per run: one topic
 * with N valid ORDER_CREATED v1 messages (the relay's CloudEvents mapping, toKafkaMessage; lines
 * of the orders catalog, EUR), and a fresh database with the shared migrations (outbox,
 * processed_events) plus a small effect table; with I or B also an inventory and a billing
 * database, migrated by the apps' own migrate(). Every measurement reads the whole topic from the
 * beginning with a consumer group of its own; processed_events and the effect tables (for I:
 * reservations, their items and the outbox, stock raised so that no order is short; for B:
 * payments and the outbox) are emptied before each. Timed from the first message
 * handed to the variant's code until the N-th is done (group join and the first fetch excluded).
 * Variants are interleaved, the order rotating each round; ratios to A are paired per round and
 * the median over rounds is reported (with --runs N also the median of the per-run medians).
 * For I and B, pg_stat_statements (when the server loads it) is reset for their database before
 * each measurement and read after it: calls and execution time per statement, per event.
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
// The apps export no package entry point; their src modules are imported as bench/write-path.ts does.
import {
  EVENT_SOURCE as BILLING_SOURCE,
  billingHandlers,
  migrate as migrateBilling,
  PaymentProvider,
} from '@outbox/billing';
import {
  DEMO_CATALOG,
  type EventEnvelope,
  fromKafkaMessage,
  ORDER_CREATED,
  type OrderCreatedV1,
  orderCreatedV1,
  schemaFor,
  toKafkaMessage,
  topicFor,
} from '@outbox/contracts';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import {
  createTestDatabase,
  type TestDatabase,
  testPostgresUrl,
} from '@outbox/devstack/testing/test-database';
import {
  type EventConsumerOptions,
  type RunningConsumer,
  runConsumer,
  startEventConsumer,
} from '@outbox/inbox';
import {
  EVENT_SOURCE as INVENTORY_SOURCE,
  inventoryHandlers,
  migrate as migrateInventory,
} from '@outbox/inventory';
import { createPool, transactionOn } from '@outbox/runtime/database';
import { defaultDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type { Kafka, KafkaMessage } from 'kafkajs';
import pg from 'pg';
import { pino } from 'pino';
import { positiveInt } from './support/args.ts';
import { type CpuReport, cpuSince, cpuSnapshot } from './support/cpu.ts';
import { loadavg, logger, machineInfo, postgresInfo, table, writeResults } from './support/environment.ts';
import { benchKafka, createTopic, freshName, startBenchBroker } from './support/kafka.ts';
import {
  readStatements,
  resetStatements,
  type StatementStats,
  statementsReader,
} from './support/statements.ts';
import { acrossRuns, median, pairedRatio, rotated, round, times } from './support/stats.ts';

// ---------------------------------------------------------------------------------------------
// Parameters

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '10000' },
    partitions: { type: 'string', default: '6' },
    variants: { type: 'string', default: 'A,V,P,P1,C100,D' },
    warmup: { type: 'string', default: '1000' },
    out: { type: 'string', default: 'bench/results/consumer-throughput' },
  },
});

const params = {
  runs: positiveInt('runs', args.runs),
  rounds: positiveInt('rounds', args.rounds),
  events: positiveInt('events', args.events),
  partitions: positiveInt('partitions', args.partitions),
  variants: args.variants.split(','),
  warmup: positiveInt('warmup', args.warmup),
  aggregates: 2000,
  poolSize: 4,
};

const log = logger('consumer-throughput');
const quietLogger = pino({ level: 'error' }, pino.destination(2));

// ---------------------------------------------------------------------------------------------
// The work

const effectTableSql = `
  create table bench_effects (
    event_id    uuid primary key,
    order_id    uuid not null,
    total_cents bigint not null
  )`;
const effectSql =
  'insert into bench_effects (event_id, order_id, total_cents) values ($1::uuid, $2::uuid, $3::bigint)';
const effectsSql = `
  insert into bench_effects (event_id, order_id, total_cents)
  select * from unnest($1::uuid[], $2::uuid[], $3::bigint[])`;
/** applyOnce's statement for many events at once: returns the ids that were not recorded before. */
const recordManySql = `
  insert into processed_events (consumer, event_id, event_type)
  select $1, e.id, e.type from unnest($2::uuid[], $3::text[]) as e (id, type)
  on conflict (consumer, event_id) do nothing
  returning event_id`;

/** What runConsumer does to every message before the handler sees it (readEvent there). */
function readEvent(message: KafkaMessage): EventEnvelope {
  const event = fromKafkaMessage(message);
  const schema = schemaFor(event.type, event.schemaversion);
  if (!schema) throw new Error(`unknown event type or version: ${event.type} v${event.schemaversion}`);
  const parsed = schema.safeParse(event.data);
  if (!parsed.success) throw new Error(`invalid ${event.type}: ${parsed.error.message}`);
  return { ...event, data: parsed.data };
}

/** The demo catalog both services' migrations seed: the SKUs inventory stocks, in EUR. */
const catalog = DEMO_CATALOG;

type Variant = {
  key: string;
  label: string;
  /** Messages per transaction: 1, a cap, or the whole batch kafkajs fetched (0). */
  txSize?: number;
};

const allVariants: Variant[] = [
  { key: 'A', label: 'bare kafkajs consumer, eachMessage, no work' },
  { key: 'V', label: 'runConsumer (eachBatch, decode + zod), chunk handler does nothing' },
  { key: 'P', label: 'production loop (startEventConsumer), chunks of ≤ 200 in 1 transaction', txSize: 200 },
  { key: 'P1', label: 'production loop, 1 event per transaction (maxChunk 1)', txSize: 1 },
  { key: 'C10', label: 'eachBatch, 1 transaction per 10 messages', txSize: 10 },
  { key: 'C100', label: 'eachBatch, 1 transaction per 100 messages', txSize: 100 },
  { key: 'C', label: 'eachBatch, 1 transaction per fetched batch', txSize: 0 },
  { key: 'D', label: 'C, and the effects as one set-based INSERT', txSize: 0 },
  { key: 'I', label: "inventory's consumer: startEventConsumer + its handlers (reserveStocks)" },
  { key: 'B', label: "billing's consumer: startEventConsumer + billingHandlers (provider: no latency)" },
];
const variants = params.variants.map((key) => {
  const variant = allVariants.find((v) => v.key === key);
  if (!variant) throw new Error(`unknown variant ${key}; known: ${allVariants.map((v) => v.key).join(',')}`);
  return variant;
});
if (!variants.some((v) => v.key === 'A')) throw new Error('--variants must include A (the baseline)');

// ---------------------------------------------------------------------------------------------
// Measurement

type Measurement = {
  round: number;
  variant: string;
  events: number;
  elapsedMs: number;
  eventsPerSec: number;
  /** Transactions committed (DB variants) and kafkajs batches seen (eachBatch variants). */
  transactions: number;
  batches: number;
  meanBatchSize: number;
  cpu: CpuReport;
  /** I and B: pg_stat_statements of the service database over the measurement. */
  statements?: StatementStats[];
};

/** Counts handled messages and remembers when the first started and the N-th finished. */
function progress(target: number) {
  let firstAt: number | undefined;
  let lastAt = 0;
  let handled = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  return {
    started() {
      firstAt ??= performance.now();
    },
    handled(n = 1) {
      handled += n;
      if (handled >= target && lastAt === 0) {
        lastAt = performance.now();
        resolveDone();
      }
    },
    done,
    get count() {
      return handled;
    },
    elapsedMs: () => lastAt - (firstAt ?? lastAt),
  };
}

type Fixture = {
  kafka: Kafka;
  topic: string;
  db: TestDatabase;
  pool: pg.Pool;
  admin: pg.Client;
  brokerPid: number;
  brokers: string[];
  /** The topic is `<prefix>order.events`, as startEventConsumer names it. */
  prefix: string;
  /** The service databases of I and B (when those variants run). */
  inventory?: ServiceDatabase;
  billing?: ServiceDatabase;
  /** A client that reads pg_stat_statements, if the server has it. */
  statements?: pg.Client;
};

/** A database migrated by an app's migrate(), with the app's pool (createPool, default timeouts). */
type ServiceDatabase = { db: TestDatabase; pool: pg.Pool; admin: pg.Client };

async function serviceDatabase(label: string, migrate: (url: string) => Promise<string[]>) {
  const db = await createTestDatabase(label);
  try {
    await migrate(db.url);
  } catch (err) {
    await db.drop();
    throw err;
  }
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const pool = createPool(db.url, defaultDatabaseTimeouts, (err) =>
    log(`idle connection failed: ${err.message}`),
  );
  return { db, pool, admin };
}

async function closeServiceDatabase(service: ServiceDatabase | undefined): Promise<void> {
  if (!service) return;
  await service.pool.end().catch(() => {});
  await service.admin.end().catch(() => {});
  await service.db.drop();
}

/** Empties what a measurement of I or B writes; inventory's stock is raised so no order is short. */
const resetSql: Record<string, string> = {
  I: 'truncate processed_events, reservation_items, reservations, outbox; update stock set available = 1000000000',
  B: 'truncate processed_events, payments, outbox',
};

/** After I or B: every event recorded once, each with its decision and its one reply in the outbox. */
const checkSql: Record<string, string> = {
  I: `select (select count(*) from processed_events)::int as processed,
             (select count(*) from reservations where status = 'RESERVED')::int as decided,
             (select count(*) from reservations)::int as decisions,
             (select count(*) from outbox)::int as replies`,
  B: `select (select count(*) from processed_events)::int as processed,
             (select count(*) from payments where status = 'AUTHORIZED')::int as decided,
             (select count(*) from payments)::int as decisions,
             (select count(*) from outbox)::int as replies`,
};

async function measure(
  fixture: Fixture,
  variant: Variant,
  events: number,
  roundIndex: number,
): Promise<Measurement> {
  const { kafka, topic, pool, admin } = fixture;
  await admin.query('truncate processed_events, bench_effects');
  const service = variant.key === 'I' ? fixture.inventory : variant.key === 'B' ? fixture.billing : undefined;
  if (service) {
    await service.admin.query(resetSql[variant.key] as string);
    if (fixture.statements) await resetStatements(fixture.statements, service.db.name);
  }
  const groupId = freshName(`consumer-${variant.key.toLowerCase()}`);
  const track = progress(events);
  let transactions = 0;
  let batches = 0;
  let batchMessages = 0;
  /** A chunk transaction that counts, once it committed, the events applied in it. */
  const counting =
    (transaction: ReturnType<typeof transactionOn>, onStart: () => void = () => {}) =>
    async <T>(work: (tx: pg.PoolClient) => Promise<T>): Promise<T> => {
      onStart();
      const results = await transaction(work);
      transactions++;
      batches++;
      if (Array.isArray(results)) {
        batchMessages += results.length;
        track.handled(results.filter((result) => result === 'applied').length);
      }
      return results;
    };
  const groups = { broker: [fixture.brokerPid] };
  const cpu0 = cpuSnapshot(groups);
  let stop: () => Promise<void>;

  if (variant.key === 'A') {
    const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async () => {
        track.started();
        track.handled();
      },
    });
    stop = () => consumer.disconnect();
  } else if (variant.key === 'V') {
    const running: RunningConsumer = await runConsumer({
      kafka,
      groupId,
      topics: [topic],
      topicPartitions: params.partitions,
      logger: quietLogger,
      handleChunk: async (items) => {
        track.started();
        batches++;
        batchMessages += items.length;
        track.handled(items.length);
        return items.map(() => 'ignored' as const);
      },
    });
    stop = () => running.stop();
  } else if (variant.key === 'P' || variant.key === 'P1') {
    const transaction = transactionOn(pool);
    const consumer = startEventConsumer<pg.PoolClient>({
      source: '/bench',
      groupId,
      kafka: { brokers: fixture.brokers, topicPrefix: fixture.prefix, topicPartitions: params.partitions },
      aggregateTypes: ['order'],
      // Counts what committed: applyChunk's results, once the transaction is through.
      transaction: counting(transaction),
      handlers: {
        [ORDER_CREATED]: async (tx, event) => {
          track.started();
          const { data } = event;
          await tx.query(effectSql, [event.id, data.orderId, data.totalCents]);
          return undefined;
        },
      },
      logger: quietLogger,
      registry: createMetricsRegistry('bench'),
      maxChunk: variant.txSize ?? 200,
    });
    stop = () => consumer.stop();
  } else if (variant.key === 'I' || variant.key === 'B') {
    const transaction = transactionOn((service as ServiceDatabase).pool);
    // Counted as in P: the applied events of a chunk whose transaction committed.
    const counted = counting(transaction, () => track.started());
    let source: string;
    let handlers: EventConsumerOptions<pg.PoolClient>['handlers'];
    if (variant.key === 'I') {
      source = INVENTORY_SOURCE;
      handlers = inventoryHandlers;
    } else {
      source = BILLING_SOURCE;
      const provider = new PaymentProvider({
        limitCents: 10n ** 12n,
        faultRate: 0,
        latencyMs: 0,
        timeoutMs: 3_000,
        remember: 100_000,
      });
      const real = billingHandlers((service as ServiceDatabase).pool, provider);
      const created = real[ORDER_CREATED];
      handlers = {
        ...real,
        // The clock starts with the first chunk's step before its transaction (the provider calls).
        [ORDER_CREATED]: {
          prepareAll: (events) => {
            track.started();
            return created.prepareAll?.(events) ?? Promise.resolve();
          },
          applyAll: created.applyAll,
        },
      };
    }
    const consumer = startEventConsumer<pg.PoolClient>({
      source,
      groupId,
      kafka: { brokers: fixture.brokers, topicPrefix: fixture.prefix, topicPartitions: params.partitions },
      aggregateTypes: ['order'],
      transaction: counted,
      handlers,
      logger: quietLogger,
      registry: createMetricsRegistry('bench'),
    });
    stop = () => consumer.stop();
  } else {
    const setBased = variant.key === 'D';
    const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        track.started();
        batches++;
        batchMessages += batch.messages.length;
        const size = variant.txSize || batch.messages.length;
        for (let i = 0; i < batch.messages.length && track.count < events; i += size) {
          const chunk = batch.messages.slice(i, i + size);
          // Unreadable messages would be dead-lettered as in runConsumer; this topic has none.
          const chunkEvents = chunk.map(readEvent);
          const client = await pool.connect();
          try {
            await client.query('begin');
            const { rows } = await client.query<{ event_id: string }>(recordManySql, [
              groupId,
              chunkEvents.map((e) => e.id),
              chunkEvents.map((e) => e.type),
            ]);
            // Apply each newly recorded event once (a duplicate within the chunk is applied once).
            const fresh = new Set(rows.map((row) => row.event_id));
            const toApply = chunkEvents.filter((e) => fresh.delete(e.id));
            if (setBased) {
              if (toApply.length > 0)
                await client.query(effectsSql, [
                  toApply.map((e) => e.id),
                  toApply.map((e) => (e.data as OrderCreatedV1).orderId),
                  toApply.map((e) => (e.data as OrderCreatedV1).totalCents),
                ]);
            } else {
              for (const event of toApply) {
                const data = event.data as OrderCreatedV1;
                await client.query(effectSql, [event.id, data.orderId, data.totalCents]);
              }
            }
            await client.query('commit');
            transactions++;
          } catch (err) {
            await client.query('rollback').catch(() => {});
            throw err;
          } finally {
            client.release();
          }
          // Only after the commit: a crash before this redelivers the chunk, which dedups.
          const lastMessage = chunk[chunk.length - 1];
          if (lastMessage) resolveOffset(lastMessage.offset);
          track.handled(chunk.length);
          await heartbeat();
        }
      },
    });
    stop = () => consumer.disconnect();
  }

  const timeout = setTimeout(() => {
    log(`${variant.key}: still ${events - track.count} messages to go after 300 s`);
  }, 300_000);
  try {
    await track.done;
  } finally {
    clearTimeout(timeout);
    await stop();
  }
  const cpu = cpuSince(cpu0, groups);
  const statements =
    service && fixture.statements ? await readStatements(fixture.statements, service.db.name) : undefined;

  if (service) {
    const { rows } = await service.admin.query<{
      processed: number;
      decided: number;
      decisions: number;
      replies: number;
    }>(checkSql[variant.key] as string);
    const counts = rows[0];
    // Every event decided once and answered once; with stock raised and no declines, all positively.
    if (
      !counts ||
      counts.processed < events ||
      counts.decisions !== counts.processed ||
      counts.decided !== counts.processed ||
      counts.replies !== counts.processed
    )
      throw new Error(`${variant.key}: ${JSON.stringify(counts)}, expected ${events} of each`);
  } else if (variant.key !== 'A' && variant.key !== 'V') {
    const { rows } = await admin.query<{ processed: number; effects: number }>(
      'select (select count(*) from processed_events)::int as processed, (select count(*) from bench_effects)::int as effects',
    );
    const counts = rows[0];
    // A chunk may overshoot the target by less than its size; what matters is one effect per record.
    if (!counts || counts.processed < events || counts.effects !== counts.processed)
      throw new Error(
        `${variant.key}: ${counts?.processed} processed, ${counts?.effects} effects, expected ${events}`,
      );
  }
  const elapsedMs = track.elapsedMs();
  return {
    round: roundIndex,
    variant: variant.key,
    events,
    elapsedMs: round(elapsedMs, 1),
    eventsPerSec: round((events / elapsedMs) * 1000, 1),
    transactions,
    batches,
    meanBatchSize: round(batches > 0 ? batchMessages / batches : Number.NaN, 1),
    cpu,
    ...(statements ? { statements } : {}),
  };
}

/** N valid ORDER_CREATED v1 events over 2,000 aggregates, as the relay would publish them. */
async function produce(kafka: Kafka, topic: string, count: number): Promise<void> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  try {
    for (let start = 0; start < count; start += 1000) {
      const messages = Array.from({ length: Math.min(1000, count - start) }, (_, j) => {
        const n = start + j;
        // One to three lines of the catalog, one or two units each (about two lines per order).
        const lines = Array.from({ length: 1 + (n % 3) }, (_, k) => {
          const product = catalog[(n + k) % catalog.length] as (typeof catalog)[number];
          return { ...product, quantity: 1 + ((n + k) % 2) };
        });
        const data = orderCreatedV1.parse({
          orderId: randomUUID(),
          customerId: `customer-${n % params.aggregates}`,
          currency: 'EUR',
          totalCents: String(lines.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0)),
          items: lines.map((line) => ({
            sku: line.sku,
            quantity: line.quantity,
            unitPriceCents: String(line.unitPriceCents),
          })),
        });
        return toKafkaMessage({
          id: randomUUID(),
          source: '/orders',
          type: ORDER_CREATED,
          specversion: '1.0',
          time: new Date().toISOString(),
          subject: `agg-${n % params.aggregates}`,
          aggregatetype: 'order',
          schemaversion: 1,
          datacontenttype: 'application/json',
          data,
        });
      });
      await producer.sendBatch({ topicMessages: [{ topic, messages }], acks: -1 });
    }
  } finally {
    await producer.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Runs and summaries

type RunSummary = {
  eventsPerSec: Record<string, number>;
  meanBatchSize: Record<string, number>;
  transactionsPerSec: Record<string, number>;
  cpuPer1000: Record<string, Record<string, number>>;
  ratios: Record<string, number>;
  /** I and B: each statement over all rounds, per chunk transaction and per 1,000 events. */
  statements: Record<string, StatementSummary[]>;
};

type StatementSummary = {
  query: string;
  callsPerChunk: number;
  rowsPerCall: number;
  execMsPer1000: number;
  meanMs: number;
};

/** Sums a variant's pg_stat_statements over its rounds (same statement text = same statement). */
function statementSummary(mine: Measurement[]): StatementSummary[] {
  const events = mine.reduce((sum, m) => sum + m.events, 0);
  const chunks = mine.reduce((sum, m) => sum + m.transactions, 0);
  const byQuery = new Map<string, { calls: number; rows: number; totalMs: number }>();
  for (const m of mine)
    for (const st of m.statements ?? []) {
      const entry = byQuery.get(st.query) ?? { calls: 0, rows: 0, totalMs: 0 };
      entry.calls += st.calls;
      entry.rows += st.rows;
      entry.totalMs += st.totalMs;
      byQuery.set(st.query, entry);
    }
  return [...byQuery]
    .map(([query, entry]) => ({
      query,
      callsPerChunk: round(entry.calls / chunks, 2),
      rowsPerCall: round(entry.rows / entry.calls, 1),
      execMsPer1000: round((entry.totalMs * 1000) / events, 2),
      meanMs: round(entry.totalMs / entry.calls, 3),
    }))
    .sort((a, b) => b.execMsPer1000 - a.execMsPer1000);
}

type RunResult = {
  run: number;
  durationSec: number;
  loadavgBefore: number[];
  loadavgAfter: number[];
  rounds: Measurement[];
  summary: RunSummary;
};

const comparisons = (): [string, string, string][] => {
  const has = (key: string) => variants.some((v) => v.key === key);
  const out: [string, string, string][] = [];
  for (const v of variants) if (v.key !== 'A') out.push([`${v.key}/A`, v.key, 'A']);
  for (const key of ['P', 'C100', 'D']) if (has(key) && has('P1')) out.push([`${key}/P1`, key, 'P1']);
  if (has('P') && has('V')) out.push(['P/V', 'P', 'V']);
  return out;
};

function summarize(rounds: Measurement[]): RunSummary {
  const eventsPerSec: Record<string, number> = {};
  const meanBatchSize: Record<string, number> = {};
  const transactionsPerSec: Record<string, number> = {};
  const cpuPer1000: Record<string, Record<string, number>> = {};
  const statements: Record<string, StatementSummary[]> = {};
  for (const variant of variants) {
    const mine = rounds.filter((m) => m.variant === variant.key);
    if (mine.some((m) => m.statements)) statements[variant.key] = statementSummary(mine);
    eventsPerSec[variant.key] = round(median(mine.map((m) => m.eventsPerSec)), 1);
    meanBatchSize[variant.key] = round(median(mine.map((m) => m.meanBatchSize)), 1);
    transactionsPerSec[variant.key] = round(
      median(mine.map((m) => (m.transactions / m.elapsedMs) * 1000)),
      1,
    );
    const groups: Record<string, number> = {};
    for (const group of Object.keys(mine[0]?.cpu.seconds ?? {}))
      groups[group] = round(median(mine.map((m) => ((m.cpu.seconds[group] ?? 0) * 1000) / m.events)), 3);
    cpuPer1000[variant.key] = groups;
  }
  const value = (r: number, key: string) =>
    rounds.find((m) => m.round === r && m.variant === key)?.eventsPerSec;
  const ratios: Record<string, number> = {};
  for (const [name, x, y] of comparisons()) ratios[name] = pairedRatio(params.rounds, value, x, y).median;
  return { eventsPerSec, meanBatchSize, transactionsPerSec, cpuPer1000, ratios, statements };
}

async function benchmarkRun(run: number, brokers: string[], brokerPid: number): Promise<RunResult> {
  const startedAt = Date.now();
  const loadavgBefore = loadavg();
  const kafka = benchKafka('bench-consumer', brokers);
  const prefix = `${freshName('consumer')}.`;
  const topic = topicFor('order', prefix);
  await createTopic(kafka, topic, params.partitions);
  log(`run ${run}: producing ${params.events} events to ${topic}`);
  await produce(kafka, topic, params.events);
  const db = await createOutboxDatabase('bench_consumer');
  const admin = new pg.Client({ connectionString: db.url });
  const pool = new pg.Pool({ connectionString: db.url, max: params.poolSize });
  const has = (key: string) => variants.some((v) => v.key === key);
  let inventory: ServiceDatabase | undefined;
  let billing: ServiceDatabase | undefined;
  let statements: pg.Client | undefined;
  try {
    await admin.connect();
    await admin.query(effectTableSql);
    if (has('I')) inventory = await serviceDatabase('bench_consumer_inventory', migrateInventory);
    if (has('B')) billing = await serviceDatabase('bench_consumer_billing', migrateBilling);
    if (inventory || billing) {
      statements = await statementsReader(testPostgresUrl);
      if (!statements) log('pg_stat_statements is not available: no statement profile for I and B');
    }
    const fixture: Fixture = {
      kafka,
      topic,
      db,
      pool,
      admin,
      brokerPid,
      brokers,
      prefix,
      ...(inventory ? { inventory } : {}),
      ...(billing ? { billing } : {}),
      ...(statements ? { statements } : {}),
    };
    log(`run ${run}: warm-up (${params.warmup} events per variant)`);
    for (const variant of variants) await measure(fixture, variant, params.warmup, -1);
    const rounds: Measurement[] = [];
    for (let r = 0; r < params.rounds; r++) {
      const line: string[] = [];
      for (const variant of rotated(variants, r)) {
        const m = await measure(fixture, variant, params.events, r);
        rounds.push(m);
        line.push(`${variant.key} ${m.eventsPerSec.toFixed(0)}/s`);
      }
      log(`run ${run}: round ${r + 1}/${params.rounds}: ${line.join(', ')}`);
    }
    return {
      run,
      durationSec: round((Date.now() - startedAt) / 1000, 1),
      loadavgBefore,
      loadavgAfter: loadavg(),
      rounds,
      summary: summarize(rounds),
    };
  } finally {
    await statements?.end().catch(() => {});
    await closeServiceDatabase(inventory);
    await closeServiceDatabase(billing);
    await pool.end().catch(() => {});
    await admin.end().catch(() => {});
    await db.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// Reporting

type Report = {
  benchmark: 'consumer-throughput';
  date: string;
  machine: ReturnType<typeof machineInfo>;
  node: string;
  postgres: Record<string, string>;
  kafka: { version: string; broker: string };
  parameters: typeof params;
  variants: Variant[];
  runs: RunResult[];
  acrossRuns: Record<string, { median: number; perRun: number[] }>;
};

function markdownReport(result: Report): string {
  const last = result.runs[result.runs.length - 1] as RunResult;
  const ratio = (name: string) => result.acrossRuns[name]?.median;
  const runsNote =
    result.runs.length > 1
      ? `median of the per-run medians over ${result.runs.length} runs`
      : 'single run: median of the paired per-round ratios';
  const lines = ['# Consumer throughput results', ''];
  lines.push(
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}) · Kafka ${result.kafka.version} (${result.kafka.broker})`,
    '',
    `Parameters: ${params.runs} run(s) × ${params.rounds} rounds × ${params.events} ORDER_CREATED events, ${params.partitions} partitions, one consumer (partitionsConsumedConcurrently 1 for A and C/D, 3 for V, P, P1, I and B: the production default), pg pool ${params.poolSize} (I and B: createPool, node-postgres's default 10, as the apps); warm-up ${params.warmup} events per variant.`,
    '',
    `## Events per second (run ${last.run}: median over rounds; ratio: ${runsNote})`,
    '',
  );
  lines.push(
    ...table(
      ['variant', 'events/s', '÷ A', 'transactions/s', 'mean kafkajs batch', 'CPU s per 1,000 events'],
      variants.map((v) => [
        `${v.key}: ${v.label}`,
        last.summary.eventsPerSec[v.key]?.toFixed(0) ?? 'n/a',
        v.key === 'A' ? '1.00×' : times(ratio(`${v.key}/A`), 3),
        last.summary.transactionsPerSec[v.key]?.toFixed(0) ?? 'n/a',
        Number.isNaN(last.summary.meanBatchSize[v.key]) ? '—' : String(last.summary.meanBatchSize[v.key]),
        Object.entries(last.summary.cpuPer1000[v.key] ?? {})
          .map(([group, s]) => `${group} ${s.toFixed(2)}`)
          .join(', '),
      ]),
    ),
    '',
    `Ratios (${runsNote}):`,
    '',
    ...table(
      ['ratio', 'value'],
      comparisons().map(([name]) => [name, times(ratio(name), 3)]),
    ),
    '',
  );
  for (const [key, rows] of Object.entries(last.summary.statements)) {
    const mine = last.rounds.filter((m) => m.variant === key);
    const chunks = mine.reduce((sum, m) => sum + m.transactions, 0);
    const events = mine.reduce((sum, m) => sum + m.events, 0);
    const total = rows.reduce((sum, row) => sum + row.execMsPer1000, 0);
    lines.push(
      `## ${key}: PostgreSQL execution time per statement (pg_stat_statements, run ${last.run}, all ${mine.length} rounds)`,
      '',
      `${chunks} chunk transactions for ${events} events (${round(events / chunks, 1)} events per chunk); execution time of all statements ${total.toFixed(1)} ms per 1,000 events (exec only: no round trip, no commit flush).`,
      '',
      ...table(
        ['statement', 'calls per chunk', 'rows per call', 'exec ms per 1,000 events', 'mean ms'],
        rows
          .filter((row) => row.callsPerChunk >= 0.01)
          .map((row) => [
            `\`${row.query.replaceAll('|', '\\|')}\``,
            row.callsPerChunk.toFixed(2),
            row.rowsPerCall.toFixed(1),
            row.execMsPer1000.toFixed(2),
            row.meanMs.toFixed(3),
          ]),
      ),
      '',
    );
  }
  if (result.runs.length > 1) {
    lines.push(
      '## Per-run ratios',
      '',
      ...table(
        ['ratio', 'per run', 'median'],
        Object.entries(result.acrossRuns).map(([name, value]) => [
          name,
          value.perRun.map((v) => v.toFixed(3)).join(', '),
          value.median.toFixed(3),
        ]),
      ),
      '',
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main

const report: Report = {
  benchmark: 'consumer-throughput',
  date: new Date().toISOString(),
  machine: machineInfo(),
  node: process.version,
  postgres: await postgresInfo(testPostgresUrl),
  kafka: { version: 'unknown', broker: 'devstack test broker: single node, KRaft, C1-only JVM, 768 MB heap' },
  parameters: params,
  variants,
  runs: [],
  acrossRuns: {},
};

log('starting the broker');
const broker = await startBenchBroker('bench-consumer');
report.kafka.version = broker.version;
try {
  for (let run = 1; run <= params.runs; run++) {
    const result = await benchmarkRun(run, broker.broker.brokers, broker.broker.pid ?? 0);
    report.runs.push(result);
    log(`run ${run}: ${result.durationSec} s`);
  }
} finally {
  await broker.dispose();
}
report.acrossRuns = acrossRuns(report.runs.map((r) => r.summary.ratios));

writeResults(args.out, report, markdownReport(report));
log(`wrote ${args.out}.json and ${args.out}.md`);
