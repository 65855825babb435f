/**
 * Backlog drain, polling relay beside Debezium, in one invocation (docs/performance.md, "The relay
 * beside Debezium"): how long does each take to put a backlog of --events outbox rows over A
 * aggregates on the broker, for every A in --aggregates, with 1 and 2 polling relays?
 *
 *   node bench/relay-vs-debezium.ts [--help]
 *
 * One broker and one Kafka Connect worker of the benchmark's own. Each side has its own outbox
 * database and topic (LogAppendTime: each message carries the broker's append time, which with one
 * replica is its ack): the Debezium connector with the config of packages/outbox/src/cdcConnector.ts,
 * and for each relay count K a database with K real relay processes (production defaults; --batches
 * runs each relay count once per RELAY_BATCH_SIZE listed). Every side is running and idle before a measurement, as in production
 * after an outage: a measurement commits the backlog in one transaction (the same statement for
 * every side) and times from that commit (the database clock, just before the commit) to the
 * broker's append of the last message (read back with kcat); the other sides sit idle meanwhile.
 * Cells (aggregates × side) rotate from round to round; ratios are paired within a round and the
 * median over rounds is reported.
 * Needs wal_level=logical (scripts/postgres-logical-decoding.sh).
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */

import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { type TestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import type { Admin } from 'kafkajs';
import pg from 'pg';
import { insertEventsSql } from './relay/backlog.ts';
import { type Relay, relaySteps, startRelays, stepMeans } from './relay/relays.ts';
import { positiveInts } from './support/args.ts';
import { defineBench, int, ints, optional } from './support/bench.ts';
import { requireLogicalDecoding, startCdcWorker } from './support/cdc.ts';
import { benchKafka, createTopic, freshName, startBenchBroker } from './support/kafka.ts';
import { median, pairedRatio, rotated, round, times } from './support/stats.ts';

const bench = defineBench({
  name: 'relay-vs-debezium',
  about:
    'Backlog drain, polling relay beside Debezium: how long each takes to put --events outbox rows over ' +
    'A aggregates on the broker, for every A in --aggregates.',
  options: {
    rounds: int(3, 'rounds; the cells rotate from round to round'),
    events: int(20000, 'the backlog, committed in one transaction'),
    aggregates: ints('50,2000', 'aggregate counts the backlog is spread over'),
    relays: ints('1,2', 'polling relay counts'),
    batches: optional(
      'RELAY_BATCH_SIZE per polling side, comma-separated (default: the relay default)',
      positiveInts,
    ),
  },
});
const { rounds, events, aggregates: aggregateCounts, relays: relayCounts } = bench.args;
/** RELAY_BATCH_SIZE per polling side; undefined: the relay's default. */
const batches: (number | undefined)[] = bench.args.batches ?? [undefined];
const log = bench.log;
const PARTITIONS = 6;

type Side = { key: string; label: string; db: TestDatabase; topic: string; relays: Relay[] };
type Cell = {
  round: number;
  aggregates: number;
  side: string;
  ms: number;
  eventsPerSec: number;
  /** Polling sides: the relays' own step histogram over the drain, mean ms per call and batches. */
  steps?: Record<string, number>;
};

fixKafkajsIdleTimerLoop();
await requireLogicalDecoding();

const name = freshName('drain').replaceAll('-', '_');
const broker = await startBenchBroker('relay-vs-debezium');
const brokers = broker.broker.brokers;
const kafka = benchKafka('bench-relay-vs-debezium', brokers);
const admin = kafka.admin();
await admin.connect();
const connect = await startCdcWorker('bench-relay-vs-debezium', brokers, log);
const sides: Side[] = [];
const cells: Cell[] = [];

async function newSide(key: string, label: string): Promise<Side> {
  const db = await createOutboxDatabase(`bench_drain_${key}`);
  const prefix = `${name}-${key}.`;
  const topic = `${prefix}order.events`;
  await createTopic(kafka, topic, PARTITIONS, [{ name: 'message.timestamp.type', value: 'LogAppendTime' }]);
  const side: Side = { key, label, db, topic, relays: [] };
  sides.push(side);
  return side;
}

/** The topic's end offsets, per partition. */
async function endOffsets(a: Admin, topic: string): Promise<Map<number, number>> {
  const offsets = await a.fetchTopicOffsets(topic);
  return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
}

/** The broker's append times of the messages from `from` to the topic's end (kcat, per partition). */
function appendTimes(topic: string, from: Map<number, number>, to: Map<number, number>): number[] {
  const times: number[] = [];
  for (const [partition, start] of from) {
    const count = (to.get(partition) ?? start) - start;
    if (count <= 0) continue;
    const out = execFileSync(
      'kcat',
      ['-C', '-b', brokers[0] as string, '-t', topic, '-p', String(partition), '-o', String(start)].concat([
        '-c',
        String(count),
        '-e',
        '-q',
        '-f',
        '%T\\n',
      ]),
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    for (const line of out.split('\n')) if (line) times.push(Number(line));
  }
  return times;
}

/** Commit the backlog into the side's outbox and time it until its last message is on the broker. */
async function drain(side: Side, aggregates: number, cell: string, count = events): Promise<number> {
  const client = new pg.Client({ connectionString: side.db.url });
  await client.connect();
  try {
    // The polling sides start from an empty outbox (what the relays left is published); Debezium
    // reads the WAL, so the rows it already sent (never marked) do not matter to it.
    if (side.relays.length > 0) await client.query('truncate outbox');
    const before = await endOffsets(admin, side.topic);
    await client.query('begin');
    await client.query(insertEventsSql('small'), [count, aggregates, 0, cell]);
    const { rows } = await client.query<{ t0: Date }>('select clock_timestamp() as t0');
    await client.query('commit');
    const t0 = (rows[0] as { t0: Date }).t0.getTime();
    const deadline = Date.now() + 600_000;
    for (;;) {
      const now = await endOffsets(admin, side.topic);
      let sent = 0;
      for (const [partition, high] of now) sent += high - (before.get(partition) ?? 0);
      if (sent >= count) {
        const appended = appendTimes(side.topic, before, now);
        return Math.max(...appended) - t0;
      }
      if (Date.now() > deadline) throw new Error(`${side.key}: ${sent} of ${count} events after 600 s`);
      await sleep(50); // polling the end offsets, a condition
    }
  } finally {
    await client.end();
  }
}

try {
  const debezium = await newSide('debezium', 'Debezium connector (poll.interval.ms 100)');
  await connect.connect(name, debezium.db.url, debezium.topic.slice(0, -'order.events'.length), PARTITIONS);
  for (const batch of batches)
    for (const count of relayCounts) {
      const key = `polling${count}${batch ? `b${batch}` : ''}`;
      const label = `${count} polling relay${count > 1 ? 's' : ''}${batch ? `, batch ${batch}` : ''}`;
      const side = await newSide(key, label);
      side.relays = await startRelays(side.db, brokers, `${name}-${key}.`, count, undefined, key, {
        topicPartitions: PARTITIONS,
        ...(batch ? { batchSize: batch } : {}),
      });
    }

  log('warm-up: 2,000 events per side');
  for (const side of sides) await drain(side, 50, `warmup-${side.key}`, 2000);
  for (let r = 0; r < rounds; r++) {
    for (const aggregates of aggregateCounts) {
      const line: string[] = [];
      for (const side of rotated(sides, r + aggregates)) {
        const { relays } = side;
        const stepsBefore = await Promise.all(relays.map(relaySteps));
        const ms = await drain(side, aggregates, `r${r}a${aggregates}`);
        const eventsPerSec = round((events * 1000) / ms, 0);
        const steps =
          relays.length > 0 ? stepMeans(stepsBefore, await Promise.all(relays.map(relaySteps))) : undefined;
        cells.push({ round: r, aggregates, side: side.key, ms, eventsPerSec, ...(steps ? { steps } : {}) });
        line.push(`${side.key} ${eventsPerSec}/s`);
      }
      log(`round ${r + 1}/${rounds}, ${aggregates} aggregates: ${line.join(', ')}`);
    }
  }
} finally {
  await admin.disconnect();
  for (const side of sides) await Promise.allSettled(side.relays.map((relay) => relay.process.stop()));
  await connect.dispose();
  for (const side of sides) await side.db.drop();
  await broker.dispose();
}

const summary = aggregateCounts.flatMap((aggregates) =>
  sides.map((side) => {
    const mine = cells.filter((c) => c.aggregates === aggregates && c.side === side.key);
    const rate = (r: number, key: string) =>
      cells.find((c) => c.round === r && c.aggregates === aggregates && c.side === key)?.eventsPerSec;
    const ratio = pairedRatio(rounds, rate, side.key, 'debezium');
    return {
      aggregates,
      side: side.key,
      label: side.label,
      medianMs: median(mine.map((c) => c.ms)),
      medianEventsPerSec: median(mine.map((c) => c.eventsPerSec)),
      perRound: mine.map((c) => c.eventsPerSec),
      vsDebezium: ratio.median,
      vsDebeziumPerRound: ratio.perRound,
    };
  }),
);
/** What this bench writes (`<out>.json`, beside the run record writeResults adds). */
export type RelayVsDebezium = typeof report;
const report = {
  ...(await bench.header(testPostgresUrl, ['wal_level', 'synchronous_commit'])),
  command: bench.command,
  kafka: broker.version,
  parameters: {
    rounds,
    events,
    aggregateCounts,
    relayCounts,
    batches: batches.map((b) => b ?? 'relay default'),
    partitions: PARTITIONS,
  },
  // The machine is shared: its load averages (1, 5, 15 min) before and after say how busy it was.
  loadavg: bench.load(),
  cells,
  summary,
};
const markdown = [
  '# Backlog drain: polling relay beside Debezium',
  '',
  `${report.date}, ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.node}, ` +
    `${report.postgres.version} (wal_level=${report.postgres.wal_level}), Kafka ${report.kafka}, ` +
    `load average ${report.loadavg.before.join(' ')} before, ${report.loadavg.after.join(' ')} after ` +
    '(1, 5, 15 min; the machine is shared, so compare the ratios, paired within each round). ' +
    `Produced by \`${report.command}\`.`,
  '',
  `A backlog of ${events} events over A aggregates (round-robin), committed in one transaction into`,
  'an outbox that a running, idle side publishes; timed from the commit to the broker’s append of',
  `the last message. Relay batch (RELAY_BATCH_SIZE): ${batches.map((b) => b ?? 'the relay default').join(', ')}; ${rounds} rounds, cells rotated.`,
  '',
  ...markdownTableLinesOf(summary, {
    aggregates: (s) => s.aggregates,
    side: (s) => s.label,
    'median ms': (s) => s.medianMs,
    'median events/s': (s) => s.medianEventsPerSec,
    'events/s per round': (s) => s.perRound.join(', '),
    '÷ Debezium (paired median)': (s) => times(s.vsDebezium),
    'per round': (s) => s.vsDebeziumPerRound.map((x) => times(x)).join(', '),
  }),
  '',
  'Where a polling relay’s time goes: its own step histogram (outbox_relay_batch_duration_seconds)',
  'over each drain, mean ms per call of all its relays (claims that found nothing included), and',
  'the batches published.',
  '',
  ...markdownTableLinesOf(
    cells.filter((c) => c.steps),
    {
      round: (c) => c.round + 1,
      aggregates: (c) => c.aggregates,
      side: (c) => c.side,
      'claim ms': (c) => c.steps?.claimMs,
      'publish ms': (c) => c.steps?.publishMs,
      'mark ms': (c) => c.steps?.markMs,
      batches: (c) => c.steps?.batches,
    },
  ),
  '',
].join('\n');
bench.write(report, markdown, 'off');
