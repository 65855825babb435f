/**
 * Polling or CDC, measured side by side (docs/design.md#polling-or-cdc): for the polling relay and
 * for the Debezium connector, publishing the same rows of one outbox,
 * - latency at steady offered rates: from the row's commit to the broker's ack (the message's
 *   LogAppendTime) and to a consumer's arrival;
 * - throughput: how fast each drains a backlog of --backlog events already in the outbox.
 *
 *   node bench/cdc-latency.ts [--help]
 *
 * One broker of the benchmark's own, one outbox database, one Kafka Connect worker. Both relays
 * drain that one outbox into two topic prefixes, as in tests/cdc: the polling relay as a real
 * process with its production defaults (NOTIFY, poll 1000 ms), the connector with the config of
 * packages/outbox/src/cdcConnector.ts (poll.interval.ms 100). The topics are created here with
 * message.timestamp.type=LogAppendTime, so each message carries the broker's time of appending it,
 * which with one replica is when the broker acks it.
 *
 * Latency: a load generator here inserts one event per transaction (autocommit, up to 4
 * connections) at a steady offered rate (open loop) for --seconds per rate. Latency per event =
 * broker append time (or arrival at the consumer) − the row's created_at (its ce_time header:
 * milliseconds, the database clock on this same host; now() at the start of the one-statement
 * transaction, a fraction of a millisecond before its commit).
 * Throughput: the polling relay stopped and the connector paused, --backlog events are inserted
 * (1,000 per transaction); then the connector is resumed and its drain timed until every event is
 * on the topic; then the polling relay is started and timed the same way. One side at a time, so
 * neither competes with the other for the 2 cores.
 * Needs wal_level=logical (scripts/postgres-logical-decoding.sh).
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import pg from 'pg';
import { insertEventsSql } from './relay/backlog.ts';
import { openLoop, startRelays } from './relay/relays.ts';
import { defineBench, int, ints } from './support/bench.ts';
import { requireLogicalDecoding, startCdcWorker } from './support/cdc.ts';
import { benchKafka, createTopic, freshName, startBenchBroker } from './support/kafka.ts';
import { quantile, round } from './support/stats.ts';

const bench = defineBench({
  name: 'cdc-latency',
  about:
    'Polling or CDC, side by side on one outbox: commit-to-ack latency at steady offered rates, and ' +
    'how fast each drains a backlog.',
  options: {
    rates: ints('20,200,1000', 'offered rates, events/s, one transaction per event'),
    seconds: int(10, 'seconds per rate'),
    backlog: int(20000, 'events already in the outbox that each side drains'),
    /**
     * Distinct aggregate ids the events are spread over, round-robin (as in bench:relay). It matters to
     * the polling relay: its claim takes only the oldest unpublished event of each aggregate, so one
     * claim carries at most this many events (docs/benchmarks.md, "Polling or CDC").
     */
    aggregates: int(2000, 'distinct aggregate ids the events are spread over, round-robin'),
  },
});
const { rates, seconds, backlog, aggregates } = bench.args;
const log = bench.log;
const SIDES = ['polling', 'debezium'] as const;
type Side = (typeof SIDES)[number];
const PARTITIONS = 6;

fixKafkajsIdleTimerLoop(); // before the broker's readiness probe, the first kafkajs client
await requireLogicalDecoding();

const name = freshName('cdc').replaceAll('-', '_');
const prefixes: Record<Side, string> = { polling: `${name}-polling.`, debezium: `${name}-debezium.` };
const broker = await startBenchBroker('cdc-latency');
const db = await createOutboxDatabase('bench_cdc_latency');
const connect = await startCdcWorker('bench-cdc-latency', broker.broker.brokers, log);
const kafka = benchKafka('bench-cdc-latency', broker.broker.brokers);
// LogAppendTime: each message's timestamp is the broker's, set when it appends (and, one replica, acks) it.
for (const prefix of Object.values(prefixes))
  await createTopic(kafka, `${prefix}order.events`, PARTITIONS, [
    { name: 'message.timestamp.type', value: 'LogAppendTime' },
  ]);
await connect.connect(name, db.url, prefixes.debezium, PARTITIONS);
// Production defaults: batch and poll interval not set.
const startRelay = async () =>
  (
    await startRelays(db, broker.broker.brokers, prefixes.polling, 1, undefined, 'bench-cdc-latency', {
      topicPartitions: PARTITIONS,
    })
  )[0]?.process;
let relay = await startRelay();

// Per side and cell (the aggregate id's prefix names the cell: an offered rate, or the backlog):
// commit → broker append, commit → arrival, and the broker's append times themselves.
type Samples = { toBroker: number[]; toConsumer: number[]; appendedAt: number[] };
const samples = new Map<string, Samples>();
const samplesOf = (cell: string): Samples => {
  if (!samples.has(cell)) samples.set(cell, { toBroker: [], toConsumer: [], appendedAt: [] });
  return samples.get(cell) as Samples;
};
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
    const appended = Number(message.timestamp);
    const cell = samplesOf(`${side}/${message.key?.toString().split('-')[0]}`);
    cell.toBroker.push(appended - created);
    cell.toConsumer.push(arrived - created);
    cell.appendedAt.push(appended);
  },
});

// Up to 8 connections: at 1,000/s one connection's commits (each an fsync) would not keep up (and
// 4 reached 664/s on the busy machine).
const pool = new pg.Pool({ connectionString: db.url, max: 8 });

/** Inserts one event per transaction at `rate` per second for `durationMs`, on schedule (open loop). */
async function offer(cell: string, rate: number, durationMs: number) {
  const count = Math.round((rate * durationMs) / 1000);
  const loop = await openLoop(count, 1000 / rate, (n) =>
    pool.query(insertEventsSql('small'), [1, aggregates, n, cell]),
  );
  return { count, achievedRate: count / loop.seconds };
}

/** `count` events in transactions of 1,000 rows, as fast as they go: the backlog. */
async function insertBacklog(count: number): Promise<void> {
  for (let done = 0; done < count; done += 1000)
    await pool.query(insertEventsSql('small'), [Math.min(1000, count - done), aggregates, done, 'backlog']);
}

async function received(cell: string, count: number, sides: readonly Side[] = SIDES): Promise<void> {
  await eventually(
    `${count} events of ${cell} on ${sides.join(' and ')}`,
    async () =>
      sides.every((side) => samplesOf(`${side}/${cell}`).toBroker.length >= count) ? true : undefined,
    300_000,
  );
}

type LatencyRow = {
  rate: number;
  achievedRate: number;
  side: Side;
  events: number;
  toBroker: { p50: number; p99: number; max: number };
  toConsumer: { p50: number; p99: number };
};
type DrainRow = {
  side: Side;
  events: number;
  /** From the resume (connector) or the relay's process start to the last event's broker append. */
  startToLastMs: number;
  /** From the first event's broker append to the last's. */
  firstToLastMs: number;
  eventsPerSecond: number;
};
const latencyRows: LatencyRow[] = [];
const drainRows: DrainRow[] = [];

/** Times one side's drain of the backlog, from `started` to the last event's append. */
async function timeDrain(side: Side, started: number): Promise<void> {
  await received('backlog', backlog, [side]);
  const appended = samplesOf(`${side}/backlog`).appendedAt;
  const first = Math.min(...appended);
  const last = Math.max(...appended);
  drainRows.push({
    side,
    events: appended.length,
    startToLastMs: last - started,
    firstToLastMs: last - first,
    eventsPerSecond: round((backlog * 1000) / (last - started), 0),
  });
  log(`${side}: ${backlog} events drained in ${last - started} ms`);
}

const pct = (xs: number[]) => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) });
try {
  log('warm-up: 100 events at 50/s');
  await received('warmup', (await offer('warmup', 50, 2000)).count);
  for (const rate of rates) {
    const cell = `r${rate}`;
    log(`${rate} events/s for ${seconds} s`);
    const { count, achievedRate } = await offer(cell, rate, seconds * 1000);
    await received(cell, count);
    for (const side of SIDES) {
      const { toBroker, toConsumer } = samplesOf(`${side}/${cell}`);
      latencyRows.push({
        rate,
        achievedRate: round(achievedRate, 1),
        side,
        events: toBroker.length,
        toBroker: { ...pct(toBroker), max: Math.max(...toBroker) },
        toConsumer: pct(toConsumer),
      });
    }
  }

  log(`throughput: ${backlog} events inserted while the relay is stopped and the connector paused`);
  await relay?.stop();
  relay = undefined;
  await connect.setPaused(true);
  await insertBacklog(backlog);
  await sleep(1000); // nothing may be published now: a check, not a wait for a condition
  if (samplesOf('polling/backlog').toBroker.length + samplesOf('debezium/backlog').toBroker.length > 0)
    throw new Error('the backlog was published while both relays were stopped');
  let started = Date.now();
  await connect.setPaused(false);
  await timeDrain('debezium', started);
  started = Date.now();
  relay = await startRelay();
  await timeDrain('polling', started);
} finally {
  await pool.end();
  await consumer.disconnect();
  await relay?.stop();
  await connect.dispose();
  await db.drop();
  await broker.dispose();
}

/** What this bench writes (`<out>.json`, beside the run record writeResults adds). */
export type CdcLatency = typeof report;
const report = {
  ...(await bench.header(testPostgresUrl, ['wal_level', 'synchronous_commit'])),
  command: bench.command,
  kafka: broker.version,
  parameters: { rates, seconds, backlog, aggregates, partitions: PARTITIONS },
  // The machine is shared: its load averages (1, 5, 15 min) before and after say how quiet it was.
  loadavg: bench.load(),
  latency: latencyRows,
  drain: drainRows,
};
const ms = (x: number) => String(round(x, 1));
const markdown = [
  '# Polling or CDC: latency and throughput, side by side',
  '',
  `${report.date}, ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.node}, ` +
    `${report.postgres.version} (wal_level=${report.postgres.wal_level}), Kafka ${report.kafka}, ` +
    `load average ${report.loadavg.before.join(' ')} before, ${report.loadavg.after.join(' ')} after. ` +
    `Produced by \`${report.command}\`.`,
  '',
  'One outbox, both relays publishing the same rows: the polling relay (NOTIFY, poll 1000 ms) and the',
  'Debezium connector (poll.interval.ms 100), each into topics of its own (LogAppendTime).',
  `Events spread round-robin over ${aggregates} aggregate ids.`,
  '',
  '## Latency: one event per transaction at a steady offered rate',
  '',
  'commit → ack: the broker’s append time − the row’s created_at; → consumer: arrival at a kafkajs',
  'consumer − created_at (milliseconds).',
  '',
  ...markdownTableLinesOf(latencyRows, {
    'offered/s': (r) => r.rate,
    'achieved/s': (r) => r.achievedRate,
    relay: (r) => r.side,
    events: (r) => r.events,
    'commit→ack p50 ms': (r) => ms(r.toBroker.p50),
    'commit→ack p99 ms': (r) => ms(r.toBroker.p99),
    'commit→ack max ms': (r) => ms(r.toBroker.max),
    '→ consumer p50 ms': (r) => ms(r.toConsumer.p50),
    '→ consumer p99 ms': (r) => ms(r.toConsumer.p99),
  }),
  '',
  `## Throughput: a backlog of ${backlog} events drained`,
  '',
  'Inserted (1,000 per transaction) while the relay was stopped and the connector paused; then the',
  'connector resumed, then (after it) the relay started. events/s = backlog ÷ (start → last ack).',
  '',
  ...markdownTableLinesOf(drainRows, {
    relay: (r) => r.side,
    events: (r) => r.events,
    'start → last ack ms': (r) => r.startToLastMs,
    'first → last ack ms': (r) => r.firstToLastMs,
    'events/s': (r) => r.eventsPerSecond,
  }),
  '',
].join('\n');
bench.write(report, markdown, 'off');
