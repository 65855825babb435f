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
 *   node bench/consumer-throughput.ts [--help]   (variants also C10, C, I, B)
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
 * The parts: bench/consumer/: params (and the variants), workload, fixture, loops (one per variant
 * kind), measure, summary, report.
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { migrate as migrateBilling } from '@outbox/billing';
import { topicFor } from '@outbox/contracts';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { migrate as migrateInventory } from '@outbox/inventory';
import pg from 'pg';
import {
  closeServiceDatabase,
  type Fixture,
  type ServiceDatabase,
  serviceDatabase,
} from './consumer/fixture.ts';
import { type Measurement, measure } from './consumer/measure.ts';
import { bench, log, params, variants } from './consumer/params.ts';
import { markdownReport, type Report, type RunResult } from './consumer/report.ts';
import { summarize } from './consumer/summary.ts';
import { effectTableSql, produce } from './consumer/workload.ts';
import { benchBrokerInfo, benchKafka, createTopic, freshName, startBenchBroker } from './support/kafka.ts';
import { measureRuns } from './support/runs.ts';
import { statementsReader } from './support/statements.ts';
import { rotated } from './support/stats.ts';

async function benchmarkRun(run: number, brokers: string[], brokerPid: number): Promise<RunResult> {
  const kafka = benchKafka('bench-consumer', brokers);
  const prefix = `${freshName('consumer')}.`;
  const topic = topicFor('order', prefix);
  await createTopic(kafka, topic, params.partitions);
  log(`run ${run}: producing ${params.events} events to ${topic}`);
  await produce(kafka, topic, params.events, params.aggregates);
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
    if (has('I')) inventory = await serviceDatabase('bench_consumer_inventory', migrateInventory, log);
    if (has('B')) billing = await serviceDatabase('bench_consumer_billing', migrateBilling, log);
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
    // The topic holds --events messages: a longer warm-up would wait for messages never sent.
    const warmup = Math.min(params.warmup, params.events);
    log(`run ${run}: warm-up (${warmup} events per variant)`);
    for (const variant of variants) await measure(fixture, variant, warmup, -1);
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
    return { rounds, summary: summarize(rounds) };
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
// Main

const report: Report = {
  ...(await bench.header(testPostgresUrl)),
  kafka: benchBrokerInfo(),
  parameters: params,
  variants,
  runs: [],
  acrossRuns: {},
};

log('starting the broker');
const broker = await startBenchBroker('bench-consumer');
try {
  const measureRun = (run: number) => benchmarkRun(run, broker.broker.brokers, broker.broker.pid ?? 0);
  await measureRuns(report, params.runs, measureRun, log);
} finally {
  await broker.dispose();
}

bench.write(report, markdownReport(report), 'off');
