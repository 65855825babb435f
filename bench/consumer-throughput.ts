/**
 * Consumer benchmark: how many events per second does one consumer apply with the dedup record
 * (processed_events), compared with a bare kafkajs consumer that only reads the same messages?
 * P is the production loop itself (startEventConsumer → runConsumer → applyChunk: eachBatch,
 * chunks of ≤ 200 events in one transaction each, set-based dedup, a handler per event, metrics,
 * a `process` span per event with tracing off), P1 the same loop with one event per transaction;
 * C10/C100/C/D are hand-written eachBatch loops kept as reference points.
 *
 *   node bench/consumer-throughput.ts [--runs 1] [--rounds 3] [--events 10000] [--partitions 6]
 *                                     [--variants A,V,P,P1,C100,D] [--warmup 1000]
 *                                     [--out bench/results/consumer-throughput]
 *
 * One real Kafka broker (the devstack test broker) for the whole benchmark. Per run: one topic
 * with N valid ORDER_CREATED v1 messages (the relay's CloudEvents mapping, toKafkaMessage), and a
 * fresh database with the shared migrations (outbox, processed_events) plus a small effect table.
 * Every measurement reads the whole topic from the beginning with a consumer group of its own;
 * processed_events and the effect table are truncated before each. Timed from the first message
 * handed to the variant's code until the N-th is done (group join and the first fetch excluded).
 * Variants are interleaved, the order rotating each round; ratios to A are paired per round and
 * the median over rounds is reported (with --runs N also the median of the per-run medians).
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { type TestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import {
  type EventEnvelope,
  fromKafkaMessage,
  ORDER_CREATED,
  type OrderCreatedV1,
  orderCreatedV1,
  type RunningConsumer,
  runConsumer,
  schemaFor,
  toKafkaMessage,
  topicFor,
} from '@outbox/events';
import { startEventConsumer } from '@outbox/service/event-consumer';
import { createMetricsRegistry } from '@outbox/service/ops-server';
import type { Kafka, KafkaMessage } from 'kafkajs';
import pg from 'pg';
import { pino } from 'pino';
import { type CpuReport, cpuSince, cpuSnapshot } from './support/cpu.ts';
import { loadavg, logger, machineInfo, postgresInfo, table, writeResults } from './support/environment.ts';
import { benchKafka, createTopic, freshName, startBenchBroker } from './support/kafka.ts';
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

function positiveInt(name: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer`);
  return parsed;
}

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

/** BEGIN … COMMIT on one pooled connection: the shape of prisma.$transaction, without Prisma. */
function transactionOn(pool: pg.Pool) {
  return async <T>(work: (tx: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const result = await work(client);
      await client.query('commit');
      return result;
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  };
}

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
};

async function measure(
  fixture: Fixture,
  variant: Variant,
  events: number,
  roundIndex: number,
): Promise<Measurement> {
  const { kafka, topic, pool, admin } = fixture;
  await admin.query('truncate processed_events, bench_effects');
  const groupId = freshName(`consumer-${variant.key.toLowerCase()}`);
  const track = progress(events);
  let transactions = 0;
  let batches = 0;
  let batchMessages = 0;
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
      transaction: async (work) => {
        const results = await transaction(work);
        transactions++;
        batches++;
        if (Array.isArray(results)) {
          batchMessages += results.length;
          track.handled(results.filter((result) => result === 'applied').length);
        }
        return results;
      },
      handlers: {
        [ORDER_CREATED]: async (tx, event) => {
          track.started();
          const data = event.data as OrderCreatedV1;
          await tx.query(effectSql, [event.id, data.orderId, data.totalCents]);
          return undefined;
        },
      },
      logger: quietLogger,
      registry: createMetricsRegistry('bench'),
      maxChunk: variant.txSize ?? 200,
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

  if (variant.key !== 'A' && variant.key !== 'V') {
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
        const data = orderCreatedV1.parse({
          orderId: randomUUID(),
          customerId: `customer-${n % params.aggregates}`,
          currency: 'EUR',
          totalCents: '1999',
          items: [{ sku: 'MS-202', quantity: 1, unitPriceCents: '1999' }],
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
};

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
  for (const variant of variants) {
    const mine = rounds.filter((m) => m.variant === variant.key);
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
  return { eventsPerSec, meanBatchSize, transactionsPerSec, cpuPer1000, ratios };
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
  try {
    await admin.connect();
    await admin.query(effectTableSql);
    const fixture: Fixture = { kafka, topic, db, pool, admin, brokerPid, brokers, prefix };
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
    `Parameters: ${params.runs} run(s) × ${params.rounds} rounds × ${params.events} ORDER_CREATED events, ${params.partitions} partitions, one consumer (partitionsConsumedConcurrently 1 for A and C/D, 3 for V, P and P1: the production default), pg pool ${params.poolSize}; warm-up ${params.warmup} events per variant.`,
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
