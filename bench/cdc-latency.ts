/**
 * Polling or CDC, latency: how long from an outbox insert to the message reaching a consumer, for
 * the polling relay and for the Debezium connector (docs/design.md#polling-or-cdc), publishing the
 * same rows at the same time?
 *
 *   node bench/cdc-latency.ts [--rates 20,200] [--seconds 10] [--out bench/results/cdc-latency]
 *
 * One broker of the benchmark's own, one outbox database, one Kafka Connect worker. Both relays
 * drain that one outbox into two topic prefixes, as in tests/cdc: the polling relay as a real
 * process with its production defaults (NOTIFY, poll 1000 ms), the connector with the config of
 * tools/devstack/src/cdcConnector.ts (poll.interval.ms 100). A load generator here inserts one
 * event per transaction at a steady offered rate (open loop) for --seconds per rate; a consumer
 * in this process reads both topics. Latency per event = arrival at the consumer − the row's
 * created_at (its ce_time header: milliseconds, the database clock on this same host).
 * Needs wal_level=logical (scripts/postgres-logical-decoding.sh).
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { renderCdcConnectorConfig } from '@outbox/devstack/cdc-connector';
import { deleteConnector, putConnector, waitForConnectorRunning } from '@outbox/devstack/connect-rest';
import {
  dropPublication,
  dropReplicationSlot,
  ensureOutboxPublication,
  logicalDecodingUnavailable,
  waitForActiveSlot,
} from '@outbox/devstack/logical-decoding';
import { freePort } from '@outbox/devstack/ports';
import { startService } from '@outbox/devstack/service-process';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { startTestConnectWorker } from '@outbox/devstack/testing/test-connect-worker';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka';
import pg from 'pg';
import { positiveInt, positiveInts } from './support/args.ts';
import { loadavg, logger, machineInfo, postgresInfo, table, writeResults } from './support/environment.ts';
import { benchKafka, createTopic, freshName, startBenchBroker } from './support/kafka.ts';
import { quantile, round } from './support/stats.ts';

const { values: args } = parseArgs({
  options: {
    rates: { type: 'string', default: '20,200' },
    seconds: { type: 'string', default: '10' },
    out: { type: 'string', default: 'bench/results/cdc-latency' },
  },
});
const rates = positiveInts('rates', args.rates);
const seconds = positiveInt('seconds', args.seconds);
const log = logger('cdc-latency');
const SIDES = ['polling', 'debezium'] as const;
type Side = (typeof SIDES)[number];
const PARTITIONS = 6;

fixKafkajsIdleTimerLoop(); // before the broker's readiness probe, the first kafkajs client
const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) throw new Error(unavailable);

const loadBefore = loadavg();
const name = freshName('cdc').replaceAll('-', '_');
const prefixes: Record<Side, string> = { polling: `${name}-polling.`, debezium: `${name}-debezium.` };
const broker = await startBenchBroker('cdc-latency');
const db = await createOutboxDatabase('bench_cdc_latency');
const connect = await startTestConnectWorker('bench-cdc-latency', broker.broker.brokers);
const kafka = benchKafka('bench-cdc-latency', broker.broker.brokers);
for (const prefix of Object.values(prefixes)) await createTopic(kafka, `${prefix}order.events`, PARTITIONS);

await ensureOutboxPublication(db.url, name, log);
await putConnector(
  connect.worker.url,
  name,
  renderCdcConnectorConfig({
    databaseUrl: db.url,
    topicPrefix: prefixes.debezium,
    topicPartitions: PARTITIONS,
    slotName: name,
    publicationName: name,
    serverName: name,
  }),
);
await waitForConnectorRunning(connect.worker.url, name);
await waitForActiveSlot(db.url, name);
const relay = await startService(
  'relay',
  {
    DATABASE_URL: db.url,
    KAFKA_BROKERS: broker.broker.brokers.join(','),
    KAFKA_TOPIC_PREFIX: prefixes.polling,
    KAFKA_TOPIC_PARTITIONS: String(PARTITIONS),
  },
  { port: await freePort(), label: 'bench-cdc-latency' },
);

// Latencies by side and by cell (the aggregate id's prefix names the offered rate).
const latencies = new Map<string, number[]>();
const consumer = kafka.consumer({ groupId: `${name}-reader`, maxWaitTimeInMs: 100 });
await consumer.connect();
await consumer.subscribe({
  topics: Object.values(prefixes).map((p) => `${p}order.events`),
  fromBeginning: true,
});
await consumer.run({
  eachMessage: async ({ topic, message }) => {
    const arrived = Date.now();
    const side: Side = topic.startsWith(prefixes.polling) ? 'polling' : 'debezium';
    const created = Date.parse(message.headers?.ce_time?.toString() ?? '');
    const cell = `${side}/${message.key?.toString().split('-')[0]}`;
    const list = latencies.get(cell) ?? [];
    list.push(arrived - created);
    latencies.set(cell, list);
  },
});

const client = new pg.Client({ connectionString: db.url });
await client.connect();

/** Inserts one event per transaction at `rate` per second for `durationMs`, on schedule (open loop). */
async function offer(cell: string, rate: number, durationMs: number): Promise<number> {
  const count = Math.round((rate * durationMs) / 1000);
  const started = Date.now();
  for (let n = 0; n < count; n++) {
    const due = started + (n * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now()); // pacing the load, not waiting for a condition
    await client.query(
      `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
       values ($1, '/orders', 'order', $2, 'ORDER_CREATED', 1, $3::jsonb)`,
      [randomUUID(), `${cell}-${n % 50}`, JSON.stringify({ orderId: randomUUID(), totalCents: '1999' })],
    );
  }
  return count;
}

async function received(cell: string, count: number): Promise<void> {
  await eventually(
    `${count} events of ${cell} on both sides`,
    async () =>
      SIDES.every((side) => (latencies.get(`${side}/${cell}`)?.length ?? 0) >= count) ? true : undefined,
    120_000,
  );
}

type Row = { rate: number; side: Side; events: number; p50: number; p95: number; p99: number; max: number };
const rows: Row[] = [];
try {
  log('warm-up: 100 events at 50/s');
  await received('warmup', await offer('warmup', 50, 2000));
  for (const rate of rates) {
    const cell = `r${rate}`;
    log(`${rate} events/s for ${seconds} s`);
    const count = await offer(cell, rate, seconds * 1000);
    await received(cell, count);
    for (const side of SIDES) {
      const ms = latencies.get(`${side}/${cell}`) ?? [];
      rows.push({
        rate,
        side,
        events: ms.length,
        p50: quantile(ms, 0.5),
        p95: quantile(ms, 0.95),
        p99: quantile(ms, 0.99),
        max: Math.max(...ms),
      });
    }
  }
} finally {
  await client.end();
  await consumer.disconnect();
  await relay.stop();
  await deleteConnector(connect.worker.url, name).catch(() => false);
  await connect.dispose();
  await dropReplicationSlot(db.url, name);
  await dropPublication(db.url, name);
  await db.drop();
  await broker.dispose();
}

const report = {
  benchmark: 'cdc-latency',
  date: new Date().toISOString(),
  machine: machineInfo(),
  node: process.version,
  postgres: await postgresInfo(testPostgresUrl, ['wal_level', 'synchronous_commit']),
  kafka: broker.version,
  parameters: { rates, seconds, partitions: PARTITIONS },
  // The machine is shared: its load averages (1, 5, 15 min) before and after say how quiet it was.
  loadavg: { before: loadBefore, after: loadavg() },
  rows,
};
const markdown = [
  '# Polling or CDC: insert-to-consumer latency',
  '',
  `${report.date}, ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.node}, ` +
    `${report.postgres.version}, Kafka ${report.kafka}, load average ${report.loadavg.before.join(' ')} before, ` +
    `${report.loadavg.after.join(' ')} after. Produced by \`node bench/cdc-latency.ts\`.`,
  '',
  'One outbox, both relays publishing the same rows: the polling relay (NOTIFY, poll 1000 ms) and the',
  'Debezium connector (poll.interval.ms 100). One event per transaction at a steady offered rate;',
  'latency = arrival at a kafkajs consumer − the row’s created_at (milliseconds).',
  '',
  ...table(
    ['offered rate (events/s)', 'relay', 'events', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
    rows.map((r) => [
      String(r.rate),
      r.side,
      String(r.events),
      ...[r.p50, r.p95, r.p99, r.max].map((x) => String(round(x, 1))),
    ]),
  ),
  '',
].join('\n');
writeResults(args.out, report, markdown);
log(`wrote ${args.out}.json and ${args.out}.md`);
