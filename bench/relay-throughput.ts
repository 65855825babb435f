/**
 * Relay benchmark: how many events per second do 1, 2 and 4 relays publish, compared with a bare
 * kafkajs producer sending the same messages to the same broker (the ceiling), and what is the
 * commit-to-broker-ack latency at a steady offered load, with and without NOTIFY?
 *
 *   node bench/relay-throughput.ts [--runs 1] [--rounds 3] [--events 20000] [--aggregates 2000]
 *                                  [--batch 100] [--relays 1,2,4] [--producers 1,4]
 *                                  [--stale-relays 1,4] [--stale-events 2000] [--history 10000]
 *                                  [--warmup-events 2000] [--claim-probe-events 3000]
 *                                  [--rates 200,1000] [--tx-per-sec 200] [--latency-seconds 4]
 *                                  [--latency-rounds 2] [--modes notify,poll1000,poll100]
 *                                  [--skip-throughput] [--skip-claim-probe] [--skip-latency]
 *                                  [--out bench/results/relay-throughput]
 *
 * One real Kafka broker (the devstack test broker) for the whole benchmark; per run, fresh
 * databases with the shared migrations and real relay processes (`node apps/relay/src/main.ts`).
 *
 * Throughput: every relay variant has its own database, topic and K relay processes, started once
 * per run and left idle between measurements. A measurement truncates that outbox, inserts N
 * events over A aggregates in one statement (one NOTIFY, the relays wake at its commit) and times
 * from the commit until the last row is marked published (both on the database clock). The bare
 * producer variants send the same N messages (toKafkaMessage of the same kind of rows, built in
 * advance) with 1 or P idempotent producers configured like the relay's (acks=-1, one request in
 * flight), in batches of the relay's batch size. Variants are interleaved: each round runs every
 * variant once in an order that rotates from round to round; ratios are paired per round and the
 * median over rounds is reported (with --runs N, the median of the per-run medians too).
 *
 * Planner statistics: the R variants run ANALYZE in the backlog's transaction (the planner knows
 * the backlog); the S variants keep the statistics of the drained outbox, as a backlog after an
 * outage meets them. The claim probe runs the claim statement alone (no Kafka) in both states,
 * for the production query and for the NOT EXISTS form it replaced (see claimNotExistsSql).
 *
 * Latency: one relay per database; a load generator in this process inserts events at a steady
 * offered rate (open loop, small transactions) for --latency-seconds; latency per event is
 * published_at − created_at from the outbox table (both the database clock). Modes: NOTIFY on
 * (poll 1000 ms, production default), NOTIFY trigger disabled with poll 1000 ms, and disabled with
 * poll 100 ms. Cells (mode × rate) rotate per round. Each cell also counts the relay's claim
 * statements and batches (its step metric) per event published: at low rates, claims that find
 * nothing are the relay's main cost.
 *
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { toKafkaMessage, topicFor } from '@outbox/contracts';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { type TestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { claimBatch, markPublished, type OutboxRow, outboxSql, toEnvelope } from '@outbox/outbox';
import {
  compatibilityPartitioner,
  Producer as PlatformaticProducer,
  ProduceAcks,
  stringSerializers,
} from '@platformatic/kafka';
import type { Message, Producer } from 'kafkajs';
import pg from 'pg';
import { positiveInt, positiveInts } from './support/args.ts';
import { type CpuReport, cpuSince, cpuSnapshot } from './support/cpu.ts';
import { loadavg, logger, machineInfo, postgresInfo, table, writeResults } from './support/environment.ts';
import { benchKafka, createTopic, freshName, startBenchBroker } from './support/kafka.ts';
import { acrossRuns, median, pairedRatio, quantile, rotated, round, times } from './support/stats.ts';

// ---------------------------------------------------------------------------------------------
// Parameters

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '20000' },
    aggregates: { type: 'string', default: '2000' },
    batch: { type: 'string', default: '100' },
    relays: { type: 'string', default: '1,2,4' },
    'stale-relays': { type: 'string', default: '1,4' },
    'stale-events': { type: 'string', default: '2000' },
    'claim-probe-events': { type: 'string', default: '3000' },
    'skip-claim-probe': { type: 'boolean', default: false },
    history: { type: 'string', default: '10000' },
    'warmup-events': { type: 'string', default: '2000' },
    producers: { type: 'string', default: '1,4' },
    rates: { type: 'string', default: '200,1000' },
    'tx-per-sec': { type: 'string', default: '200' },
    'latency-seconds': { type: 'string', default: '4' },
    'latency-rounds': { type: 'string', default: '2' },
    modes: { type: 'string', default: 'notify,poll1000,poll100' },
    'skip-throughput': { type: 'boolean', default: false },
    'skip-latency': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/relay-throughput' },
  },
});

const params = {
  runs: positiveInt('runs', args.runs),
  rounds: positiveInt('rounds', args.rounds),
  events: positiveInt('events', args.events),
  aggregates: positiveInt('aggregates', args.aggregates),
  batchSize: positiveInt('batch', args.batch),
  relayCounts: positiveInts('relays', args.relays),
  /** Relay counts also measured with the planner statistics of a drained outbox ("stale"). */
  staleRelayCounts: args['stale-relays'] === '' ? [] : positiveInts('stale-relays', args['stale-relays']),
  /** Backlog for the stale variants: their claim cost grows with the backlog, so it is smaller. */
  staleEvents: positiveInt('stale-events', args['stale-events']),
  claimProbeEvents: positiveInt('claim-probe-events', args['claim-probe-events']),
  claimProbe: !args['skip-claim-probe'],
  /** Published rows already in the outbox when the backlog arrives (analyzed with it). */
  history: Number(args.history),
  warmupEvents: positiveInt('warmup-events', args['warmup-events']),
  producerCounts: positiveInts('producers', args.producers),
  rates: positiveInts('rates', args.rates),
  txPerSec: positiveInt('tx-per-sec', args['tx-per-sec']),
  latencySeconds: positiveInt('latency-seconds', args['latency-seconds']),
  latencyRounds: positiveInt('latency-rounds', args['latency-rounds']),
  modes: args.modes.split(',') as LatencyMode[],
  throughput: !args['skip-throughput'],
  latency: !args['skip-latency'],
  topicPartitions: 6, // the relay's default KAFKA_TOPIC_PARTITIONS
  throughputPollIntervalMs: 1000, // the relay's default RELAY_POLL_INTERVAL_MS
};
if (!params.producerCounts.includes(1)) throw new Error('--producers must include 1 (the ceiling)');

type LatencyMode = 'notify' | 'poll1000' | 'poll100';
const modeInfo: Record<LatencyMode, { label: string; notify: boolean; pollMs: number }> = {
  notify: { label: 'NOTIFY on, poll 1000 ms (production default)', notify: true, pollMs: 1000 },
  poll1000: { label: 'NOTIFY trigger disabled, poll 1000 ms', notify: false, pollMs: 1000 },
  poll100: { label: 'NOTIFY trigger disabled, poll 100 ms', notify: false, pollMs: 100 },
};
for (const mode of params.modes) if (!(mode in modeInfo)) throw new Error(`unknown mode ${mode}`);

const log = logger('relay-throughput');

// ---------------------------------------------------------------------------------------------
// Shared pieces

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

type Relay = { process: ServiceProcess; id: string };

async function startRelays(
  db: TestDatabase,
  brokers: string[],
  prefix: string,
  count: number,
  pollMs: number,
  label: string,
): Promise<Relay[]> {
  const relays: Relay[] = [];
  // One after another: four Node processes booting at once on two cores take longer in total.
  for (let i = 0; i < count; i++) {
    const id = `${label}-${i + 1}`;
    const service = await startService(
      'relay',
      {
        DATABASE_URL: db.url,
        KAFKA_BROKERS: brokers.join(','),
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_TOPIC_PARTITIONS: String(params.topicPartitions),
        RELAY_ID: id,
        RELAY_BATCH_SIZE: String(params.batchSize),
        RELAY_POLL_INTERVAL_MS: String(pollMs),
      },
      { port: await freePort(), label: 'bench-relay', name: id, timeoutMs: 60_000 },
    );
    relays.push({ process: service, id });
  }
  return relays;
}

async function relayPublished(relay: Relay): Promise<number> {
  const body = (await (await fetch(`${relay.process.url}/healthz`)).json()) as { published: number };
  return body.published;
}

type StepTotals = Record<'claim' | 'publish' | 'mark', { sum: number; count: number }>;

/** The relay's own per-step histogram (outbox_relay_batch_duration_seconds): sums and counts. */
async function relaySteps(relay: Relay): Promise<StepTotals> {
  const text = await (await fetch(`${relay.process.url}/metrics`)).text();
  const totals: StepTotals = {
    claim: { sum: 0, count: 0 },
    publish: { sum: 0, count: 0 },
    mark: { sum: 0, count: 0 },
  };
  for (const line of text.split('\n')) {
    const match = /^outbox_relay_batch_duration_seconds_(sum|count)\{([^}]*)\}\s+(\S+)/.exec(line);
    const stepName = /step="(claim|publish|mark)"/.exec(match?.[2] ?? '')?.[1];
    if (!match || !stepName) continue;
    totals[stepName as keyof StepTotals][match[1] as 'sum' | 'count'] += Number(match[3]);
  }
  return totals;
}

/** Per batch, mean ms of each step over the window (all relays together), and batches counted. */
function stepMeans(before: StepTotals[], after: StepTotals[]) {
  const out: Record<string, number> = {};
  for (const step of ['claim', 'publish', 'mark'] as const) {
    let sum = 0;
    let count = 0;
    after.forEach((a, i) => {
      sum += a[step].sum - (before[i]?.[step].sum ?? 0);
      count += a[step].count - (before[i]?.[step].count ?? 0);
    });
    out[`${step}Ms`] = round(count > 0 ? (sum / count) * 1000 : Number.NaN, 2);
    if (step === 'publish') out.batches = count;
  }
  return out;
}

const relayPids = (relays: Relay[]) =>
  relays.map((r) => r.process.pid).filter((pid): pid is number => pid !== undefined);

async function setNotifyTrigger(client: pg.Client, enabled: boolean) {
  await client.query(
    `alter table outbox ${enabled ? 'enable' : 'disable'} trigger outbox_notify_after_insert`,
  );
}

/** Wait until no row (of those with seq > afterSeq) is unpublished; false on timeout. */
async function waitAllPublished(client: pg.Client, afterSeq: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from outbox where status <> 'published' and seq > $1::bigint`,
      [afterSeq],
    );
    if (rows[0]?.n === 0) return true;
    await sleep(50);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Throughput

type StatsState = 'fresh' | 'stale';
type ThroughputVariant = {
  key: string;
  label: string;
  /** producer: bare kafkajs (the relay's client); platformatic: bare @platformatic/kafka. */
  kind: 'relay' | 'producer' | 'platformatic';
  count: number;
  /** Relays: planner statistics of the outbox when the backlog arrives (see measureRelays). */
  stats?: StatsState;
};

const relayLabel = (count: number) => `${count} relay process${count > 1 ? 'es' : ''}`;
const throughputVariants: ThroughputVariant[] = [
  ...params.relayCounts.map((count) => ({
    key: `R${count}`,
    label: `${relayLabel(count)}, statistics fresh`,
    kind: 'relay' as const,
    count,
    stats: 'fresh' as const,
  })),
  ...params.staleRelayCounts.map((count) => ({
    key: `S${count}`,
    label: `${relayLabel(count)}, statistics stale`,
    kind: 'relay' as const,
    count,
    stats: 'stale' as const,
  })),
  ...params.producerCounts.map((count) => ({
    key: `P${count}`,
    label:
      count === 1 ? 'bare kafkajs producer (ceiling)' : `${count} bare producers, ${count} batches in flight`,
    kind: 'producer' as const,
    count,
  })),
  // The same ceiling with another client: does the relay's loop or kafkajs bound it?
  ...params.producerCounts.map((count) => ({
    key: `Q${count}`,
    label:
      count === 1
        ? 'bare @platformatic/kafka producer'
        : `${count} bare @platformatic/kafka producers, ${count} batches in flight`,
    kind: 'platformatic' as const,
    count,
  })),
];

type ThroughputRound = {
  round: number;
  variant: string;
  events: number;
  elapsedMs: number;
  eventsPerSec: number;
  /** Relays only: events each relay published (from /healthz). */
  perRelay?: number[];
  /** Relays only: how long preparing the backlog took (history, analyze, insert; not timed). */
  prepareMs?: number;
  /** Relays only: first published_at − commit (the first batch's claim + send + mark). */
  firstPublishMs?: number;
  /** Relays only: mean ms per call of each step (claims that found nothing included) and batches. */
  steps?: Record<string, number>;
  /** Relays only: plan nodes PostgreSQL chose for the claim query right after the backlog committed. */
  claimPlan?: string;
  cpu: CpuReport;
};

/**
 * The backlog: N outbox rows over A aggregates, round-robin, each a valid ORDER_CREATED v1 — the
 * same statement as insertEvents (tools/devstack/src/testing/outboxDatabase.ts), here so that
 * it can run inside a transaction of ours.
 */
const insertBacklogSql = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
  select gen_random_uuid(), '/orders', 'order', 'agg-' || ((n - 1) % $2)::text, 'ORDER_CREATED', 1,
         jsonb_build_object(
           'orderId', gen_random_uuid()::text,
           'customerId', 'customer-' || ((n - 1) % $2)::text,
           'currency', 'EUR',
           'totalCents', '1999',
           'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1, 'unitPriceCents', '1999')))
    from generate_series(1, $1::int) as n
   order by n`;

/** Already published events: what an outbox holds in steady state (until retention deletes them). */
const insertHistorySql = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                      status, published_at)
  select gen_random_uuid(), '/orders', 'order', 'old-' || (n % 2000)::text, 'ORDER_CREATED', 1,
         jsonb_build_object('orderId', gen_random_uuid()::text, 'customerId', 'c', 'currency', 'EUR',
                            'totalCents', '1999', 'items', '[]'::jsonb),
         'published', now()
    from generate_series(1, $1::int) as n`;

/** The relay's claim statement itself, so that EXPLAIN shows the real query's plan. */
const claimSql = outboxSql.claim;

type PlanNode = {
  'Node Type': string;
  Alias?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
};

/**
 * How PostgreSQL plans the claim right now, in short: how it finds candidates (alias o) and how
 * it checks for an earlier unpublished event (alias earlier) — by a lookup per candidate (an
 * Index Cond on the aggregate) or by scanning the whole index for every candidate (none).
 */
async function claimPlan(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `explain (format json) ${claimSql}`,
    ['bench-explain', 30_000, params.batchSize],
  );
  const parts: string[] = [];
  const walk = (node: PlanNode) => {
    if (node['Node Type'] === 'Sort') parts.push('Sort');
    if (node.Alias === 'o_1' || node.Alias === 'earlier') {
      const how =
        node.Alias === 'earlier' ? (node['Index Cond'] ? ' per-row lookup' : ' whole index per row') : '';
      parts.push(
        `${node.Alias === 'earlier' ? 'earlier' : 'o'}: ${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}${how}`,
      );
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
  if (plan) walk(plan);
  return parts.join('; ');
}

/** The messages the bare producers send: the same rows the relays read, mapped the same way. */
async function buildMessages(): Promise<Message[]> {
  const db = await createOutboxDatabase('bench_relay_messages');
  try {
    const client = await connect(db.url);
    try {
      await client.query(insertBacklogSql, [params.events, params.aggregates]);
      const { rows } = await client.query<OutboxRow>(
        `select id, seq, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers,
                attempts, created_at
           from outbox order by seq`,
      );
      return rows.map((row) => toKafkaMessage(toEnvelope(row)));
    } finally {
      await client.end();
    }
  } finally {
    await db.drop();
  }
}

/** One database, topic and set of relays per relay count; the fresh and stale variants share it. */
type RelayFixture = { count: number; db: TestDatabase; admin: pg.Client; relays: Relay[] };

/**
 * Prepare an outbox with `history` published rows and analyze it (the statistics of a drained
 * outbox), then commit `events` new rows in one transaction (one NOTIFY: the relays wake at the
 * commit). "fresh" also runs ANALYZE inside that transaction, so the planner knows about the
 * backlog from the first claim on; "stale" leaves the statistics of the drained outbox, which is
 * what a backlog after an outage meets until autovacuum re-analyzes the table. Timed from the
 * commit until the last row is marked published, both on the database clock.
 */
async function measureRelays(
  fixture: RelayFixture,
  variant: ThroughputVariant,
  events: number,
  roundIndex: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  const { admin, relays } = fixture;
  const prepareStart = performance.now();
  await admin.query('truncate outbox');
  if (params.history > 0) await admin.query(insertHistorySql, [params.history]);
  await admin.query('analyze outbox');
  const before = await Promise.all(relays.map(relayPublished));
  const stepsBefore = await Promise.all(relays.map(relaySteps));
  const groups = { relays: relayPids(relays), broker: [brokerPid] };
  await admin.query('begin');
  await admin.query(insertBacklogSql, [events, params.aggregates]);
  // ANALYZE may run in a transaction block, and counts the rows this transaction inserted.
  if (variant.stats === 'fresh') await admin.query('analyze outbox');
  // t0 just before the commit, not after it: a relay woken by the commit's NOTIFY can mark its
  // first (small) batch before a query after the commit reads the clock, and those rows would fall
  // outside the count. The commit itself (a few ms) is inside the measured time.
  const { rows } = await admin.query<{ t0: Date }>('select clock_timestamp() as t0');
  await admin.query('commit');
  const cpu0 = cpuSnapshot(groups);
  const t0 = rows[0]?.t0 as Date;
  const prepareMs = performance.now() - prepareStart;
  const plan = await claimPlan(admin);
  if (!(await waitAllPublished(admin, '0', 300_000)))
    throw new Error(`${variant.key}: not all events published within 300 s`);
  const cpu = cpuSince(cpu0, groups);
  const { rows: timing } = await admin.query<{ elapsed_ms: number; first_ms: number; published: number }>(
    `select extract(epoch from max(published_at) - $1::timestamptz) * 1000 as elapsed_ms,
            extract(epoch from min(published_at) - $1::timestamptz) * 1000 as first_ms,
            count(*)::int as published
       from outbox where published_at > $1::timestamptz`,
    [t0],
  );
  const after = await Promise.all(relays.map(relayPublished));
  const steps = stepMeans(stepsBefore, await Promise.all(relays.map(relaySteps)));
  const perRelay = after.map((n, i) => n - (before[i] ?? 0));
  const published = timing[0]?.published ?? 0;
  const total = perRelay.reduce((a, b) => a + b, 0);
  if (published !== events || total !== events)
    throw new Error(
      `${variant.key}: ${published} rows published, relays report ${total}, expected ${events}`,
    );
  const elapsedMs = Number(timing[0]?.elapsed_ms);
  return {
    round: roundIndex,
    variant: variant.key,
    events,
    elapsedMs: round(elapsedMs, 1),
    eventsPerSec: round((events / elapsedMs) * 1000, 1),
    perRelay,
    prepareMs: round(prepareMs, 1),
    firstPublishMs: round(Number(timing[0]?.first_ms), 1),
    steps,
    claimPlan: plan,
    cpu,
  };
}

type ProducerFixture = { variant: ThroughputVariant; topic: string; producers: Producer[] };
type PlatformaticFixture = {
  variant: ThroughputVariant;
  topic: string;
  producers: PlatformaticProducer<string, Buffer, string, string>[];
};

/** kafkajs messages as @platformatic/kafka takes them (string keys and headers, Buffer values). */
function toPlatformaticMessages(messages: Message[], topic: string) {
  return messages.map((message) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(message.headers ?? {}))
      if (value !== undefined) headers[name] = String(value);
    return {
      topic,
      key: String(message.key),
      value: Buffer.isBuffer(message.value) ? message.value : Buffer.from(String(message.value)),
      headers,
    };
  });
}

async function measurePlatformatic(
  fixture: PlatformaticFixture,
  messages: Message[],
  roundIndex: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  const { producers, topic, variant } = fixture;
  const groups = { broker: [brokerPid] };
  const converted = toPlatformaticMessages(messages, topic);
  const cpu0 = cpuSnapshot(groups);
  let cursor = 0;
  const worker = async (producer: PlatformaticProducer<string, Buffer, string, string>) => {
    while (cursor < converted.length) {
      const batch = converted.slice(cursor, cursor + params.batchSize);
      cursor += batch.length;
      // Configured like the relay's producer: idempotent, acks=all (-1), one batch at a time,
      // the Java client's murmur2 partitioner.
      await producer.send({ messages: batch, acks: ProduceAcks.ALL });
    }
  };
  const start = performance.now();
  await Promise.all(producers.map(worker));
  const elapsedMs = performance.now() - start;
  return {
    round: roundIndex,
    variant: variant.key,
    events: messages.length,
    elapsedMs: round(elapsedMs, 1),
    eventsPerSec: round((messages.length / elapsedMs) * 1000, 1),
    cpu: cpuSince(cpu0, groups),
  };
}

async function measureProducers(
  fixture: ProducerFixture,
  messages: Message[],
  roundIndex: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  const { producers, topic, variant } = fixture;
  const groups = { broker: [brokerPid] };
  const cpu0 = cpuSnapshot(groups);
  let cursor = 0;
  const worker = async (producer: Producer) => {
    while (cursor < messages.length) {
      const batch = messages.slice(cursor, cursor + params.batchSize);
      cursor += batch.length;
      // Exactly the relay's call: sendBatch with acks=-1, one request in flight per producer.
      await producer.sendBatch({ topicMessages: [{ topic, messages: batch }], acks: -1 });
    }
  };
  const start = performance.now();
  await Promise.all(producers.map(worker));
  const elapsedMs = performance.now() - start;
  return {
    round: roundIndex,
    variant: variant.key,
    events: messages.length,
    elapsedMs: round(elapsedMs, 1),
    eventsPerSec: round((messages.length / elapsedMs) * 1000, 1),
    cpu: cpuSince(cpu0, groups),
  };
}

async function throughputPhase(run: number, brokers: string[], brokerPid: number) {
  log(`run ${run}: building ${params.events} messages for the bare producers`);
  const messages = await buildMessages();
  const kafka = benchKafka('bench-relay-throughput', brokers);
  const relayFixtures = new Map<number, RelayFixture>();
  const producerFixtures: ProducerFixture[] = [];
  const platformaticFixtures: PlatformaticFixture[] = [];
  const rounds: ThroughputRound[] = [];
  try {
    for (const variant of throughputVariants) {
      if (variant.kind === 'relay') {
        if (relayFixtures.has(variant.count)) continue;
        const db = await createOutboxDatabase(`bench_relay_${variant.count}`);
        const admin = await connect(db.url);
        const prefix = `${freshName(`relays${variant.count}`)}.`;
        // Created up front, so no measurement includes topic creation.
        await createTopic(kafka, topicFor('order', prefix), params.topicPartitions);
        log(`run ${run}: starting ${variant.count} relay(s)`);
        const fixture: RelayFixture = { count: variant.count, db, admin, relays: [] };
        relayFixtures.set(variant.count, fixture);
        fixture.relays = await startRelays(
          db,
          brokers,
          prefix,
          variant.count,
          params.throughputPollIntervalMs,
          `bench-r${variant.count}`,
        );
      } else if (variant.kind === 'platformatic') {
        const topic = freshName(`bare-${variant.key.toLowerCase()}`);
        await createTopic(kafka, topic, params.topicPartitions);
        const producers = Array.from(
          { length: variant.count },
          (_, n) =>
            new PlatformaticProducer<string, Buffer, string, string>({
              clientId: `bench-platformatic-${n}`,
              bootstrapBrokers: brokers,
              idempotent: true,
              acks: ProduceAcks.ALL,
              autocreateTopics: false,
              partitioner: compatibilityPartitioner,
              serializers: {
                key: stringSerializers.key,
                value: (value?: Buffer) => value,
                headerKey: stringSerializers.headerKey,
                headerValue: stringSerializers.headerValue,
              },
            }),
        );
        platformaticFixtures.push({ variant, topic, producers });
      } else {
        const topic = freshName(`bare-${variant.key.toLowerCase()}`);
        await createTopic(kafka, topic, params.topicPartitions);
        const producers = Array.from({ length: variant.count }, () =>
          kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false }),
        );
        await Promise.all(producers.map((p) => p.connect()));
        producerFixtures.push({ variant, topic, producers });
      }
    }

    const eventsFor = (variant: ThroughputVariant) =>
      variant.stats === 'stale' ? params.staleEvents : params.events;
    const measure = (variant: ThroughputVariant, r: number, events: number) => {
      if (variant.kind === 'relay')
        return measureRelays(relayFixtures.get(variant.count) as RelayFixture, variant, events, r, brokerPid);
      if (variant.kind === 'platformatic') {
        const fixture = platformaticFixtures.find((f) => f.variant === variant) as PlatformaticFixture;
        return measurePlatformatic(fixture, messages.slice(0, events), r, brokerPid);
      }
      const producer = producerFixtures.find((f) => f.variant === variant) as ProducerFixture;
      return measureProducers(producer, messages.slice(0, events), r, brokerPid);
    };

    // Warm-up: every variant once with a small backlog (JIT, connections, topic metadata).
    log(`run ${run}: throughput warm-up (${params.warmupEvents} events per variant)`);
    // The stale variants use the same relays as the fresh ones: warmed up with them.
    for (const variant of throughputVariants)
      if (variant.stats !== 'stale') await measure(variant, -1, params.warmupEvents);

    for (let r = 0; r < params.rounds; r++) {
      const line: string[] = [];
      for (const variant of rotated(throughputVariants, r)) {
        const result = await measure(variant, r, eventsFor(variant));
        rounds.push(result);
        line.push(`${variant.key} ${result.eventsPerSec.toFixed(0)}/s`);
      }
      log(`run ${run}: throughput round ${r + 1}/${params.rounds}: ${line.join(', ')}`);
    }
    return rounds;
  } finally {
    for (const fixture of producerFixtures)
      await Promise.allSettled(fixture.producers.map((p) => p.disconnect()));
    for (const fixture of platformaticFixtures)
      await Promise.allSettled(fixture.producers.map((p) => p.close()));
    for (const fixture of relayFixtures.values()) {
      await Promise.allSettled(fixture.relays.map((r) => r.process.stop()));
      await fixture.admin.end().catch(() => {});
      await fixture.db.drop();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Claim probe: the claim statement alone, production vs the form it replaced, stale vs fresh statistics

/**
 * The claim as it was before this benchmark: "no earlier unpublished event of this aggregate" as
 * NOT EXISTS. The same rows qualify as with production's `seq = (select min(seq) ...)`, but NOT
 * EXISTS becomes an anti-join whose inner side the planner may scan whole when its statistics
 * predate the backlog. Kept here, benchmark only, so the comparison can be rerun. (Results
 * recorded before the switch call production "rewrite" and this form "production".)
 */
const claimNotExistsSql = `
  with claimable as (
    select o.id, o.status as previous_status
      from outbox o
     where ((o.status = 'pending' and o.next_attempt_at <= now())
         or (o.status = 'in_flight' and o.lease_expires_at < now()))
       and not exists (
             select 1
               from outbox earlier
              where earlier.aggregate_type = o.aggregate_type
                and earlier.aggregate_id = o.aggregate_id
                and earlier.seq < o.seq
                and earlier.status <> 'published')
     order by o.seq
     limit $3
       for update of o skip locked)
  update outbox o
     set status = 'in_flight',
         lease_owner = $1,
         lease_expires_at = now() + make_interval(secs => $2::int / 1000.0),
         attempts = o.attempts + 1
    from claimable
   where o.id = claimable.id
  returning o.id`;

type ClaimProbeCell = { query: 'production' | 'not-exists'; stats: StatsState };
type ClaimProbeRound = ClaimProbeCell & {
  round: number;
  events: number;
  claims: number;
  totalMs: number;
  eventsPerSec: number;
  meanClaimMs: number;
  maxClaimMs: number;
};

/** Drain a backlog with claim + markPublished from one connection, no Kafka: the database's share. */
async function claimProbe(run: number): Promise<ClaimProbeRound[]> {
  const db = await createOutboxDatabase('bench_claim_probe');
  const admin = await connect(db.url);
  const cells: ClaimProbeCell[] = [
    { query: 'production', stats: 'fresh' },
    { query: 'production', stats: 'stale' },
    { query: 'not-exists', stats: 'fresh' },
    { query: 'not-exists', stats: 'stale' },
  ];
  const results: ClaimProbeRound[] = [];
  try {
    const owner = 'bench-claim-probe';
    for (let r = -1; r < params.rounds; r++) {
      const events = r < 0 ? params.warmupEvents : params.claimProbeEvents;
      for (const cell of rotated(cells, Math.max(0, r))) {
        await admin.query('truncate outbox');
        if (params.history > 0) await admin.query(insertHistorySql, [params.history]);
        await admin.query('analyze outbox');
        await admin.query('begin');
        await admin.query(insertBacklogSql, [events, params.aggregates]);
        if (cell.stats === 'fresh') await admin.query('analyze outbox');
        await admin.query('commit');
        const claimTimes: number[] = [];
        const start = performance.now();
        for (;;) {
          const claimStart = performance.now();
          const ids =
            cell.query === 'production'
              ? (await claimBatch(admin, owner, 30_000, params.batchSize)).map((row) => row.id)
              : (
                  await admin.query<{ id: string }>(claimNotExistsSql, [owner, 30_000, params.batchSize])
                ).rows.map((row) => row.id);
          claimTimes.push(performance.now() - claimStart);
          if (ids.length === 0) break;
          await markPublished(admin, ids, owner);
        }
        const totalMs = performance.now() - start;
        const { rows } = await admin.query<{ n: number }>(
          `select count(*)::int as n from outbox where status <> 'published'`,
        );
        if (rows[0]?.n !== 0)
          throw new Error(`claim probe ${cell.query}/${cell.stats}: rows left unpublished`);
        if (r < 0) continue;
        results.push({
          ...cell,
          round: r,
          events,
          claims: claimTimes.length,
          totalMs: round(totalMs, 1),
          eventsPerSec: round((events / totalMs) * 1000, 1),
          meanClaimMs: round(claimTimes.reduce((a, b) => a + b, 0) / claimTimes.length, 2),
          maxClaimMs: round(Math.max(...claimTimes), 2),
        });
      }
      if (r >= 0)
        log(
          `run ${run}: claim probe round ${r + 1}/${params.rounds}: ${results
            .filter((x) => x.round === r)
            .map((x) => `${x.query}/${x.stats} ${x.eventsPerSec.toFixed(0)}/s`)
            .join(', ')}`,
        );
    }
    return results;
  } finally {
    await admin.end().catch(() => {});
    await db.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// Latency

type LatencyRound = {
  round: number;
  mode: LatencyMode;
  rate: number;
  offered: number;
  /** Events actually inserted per second (the generator is open loop, but runs on a busy host). */
  achievedRate: number;
  lateTicks: number;
  events: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The relay's claim statements in the cell (its step metric), per event published. */
  claimsPerEvent: number;
  /** The relay's batches sent to the broker in the cell, per event published. */
  batchesPerEvent: number;
  cpu: CpuReport;
};

const insertSome = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
  select gen_random_uuid(), '/orders', 'order', 'lat-' || ((($2::int + n) % $3::int))::text, 'ORDER_CREATED', 1,
         jsonb_build_object(
           'orderId', gen_random_uuid()::text,
           'customerId', 'customer-' || n::text,
           'currency', 'EUR',
           'totalCents', '1999',
           'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1, 'unitPriceCents', '1999')))
    from generate_series(1, $1::int) as n`;

/**
 * Offer `rate` events/s for `seconds`: a transaction of rate/txPerSec events every 1/txPerSec s,
 * on a schedule fixed in advance (open loop: a slow insert does not delay the next one).
 */
async function offerLoad(pool: pg.Pool, rate: number, seconds: number) {
  const perTx = Math.max(1, Math.round(rate / params.txPerSec));
  const intervalMs = (1000 * perTx) / rate;
  const transactions = Math.round((rate * seconds) / perTx);
  const inflight: Promise<unknown>[] = [];
  let lateTicks = 0;
  let aggregateCursor = 0;
  const start = performance.now();
  for (let i = 0; i < transactions; i++) {
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    else if (wait < -intervalMs) lateTicks++;
    inflight.push(pool.query(insertSome, [perTx, aggregateCursor, params.aggregates]));
    aggregateCursor += perTx;
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  return { events: transactions * perTx, achievedRate: (transactions * perTx) / elapsed, lateTicks };
}

type LatencyFixture = { pollMs: number; db: TestDatabase; admin: pg.Client; pool: pg.Pool; relays: Relay[] };

async function latencyPhase(run: number, brokers: string[], brokerPid: number): Promise<LatencyRound[]> {
  const kafka = benchKafka('bench-relay-latency', brokers);
  const fixtures = new Map<number, LatencyFixture>();
  const rounds: LatencyRound[] = [];
  try {
    for (const pollMs of [...new Set(params.modes.map((m) => modeInfo[m].pollMs))]) {
      const db = await createOutboxDatabase(`bench_relay_latency_${pollMs}`);
      const admin = await connect(db.url);
      const prefix = `${freshName(`lat${pollMs}`)}.`;
      await createTopic(kafka, topicFor('order', prefix), params.topicPartitions);
      const fixture: LatencyFixture = {
        pollMs,
        db,
        admin,
        pool: new pg.Pool({ connectionString: db.url, max: 8 }),
        relays: [],
      };
      fixtures.set(pollMs, fixture);
      fixture.relays = await startRelays(db, brokers, prefix, 1, pollMs, `bench-lat${pollMs}`);
    }
    const cells = params.rates.flatMap((rate) => params.modes.map((mode) => ({ mode, rate })));

    const measure = async (mode: LatencyMode, rate: number, r: number, seconds: number) => {
      const fixture = fixtures.get(modeInfo[mode].pollMs) as LatencyFixture;
      await setNotifyTrigger(fixture.admin, modeInfo[mode].notify);
      const { rows } = await fixture.admin.query<{ seq: string }>(
        'select coalesce(max(seq), 0)::text as seq from outbox',
      );
      const afterSeq = rows[0]?.seq ?? '0';
      const groups = { relays: relayPids(fixture.relays), broker: [brokerPid] };
      const cpu0 = cpuSnapshot(groups);
      const steps0 = await Promise.all(fixture.relays.map(relaySteps));
      const offered = await offerLoad(fixture.pool, rate, seconds);
      if (!(await waitAllPublished(fixture.admin, afterSeq, 60_000)))
        throw new Error(`latency ${mode} @${rate}/s: events still unpublished 60 s after the load`);
      const cpu = cpuSince(cpu0, groups);
      const steps = await Promise.all(fixture.relays.map(relaySteps));
      const stepCount = (step: keyof StepTotals) =>
        steps.reduce((sum, s, i) => sum + s[step].count - (steps0[i]?.[step].count ?? 0), 0);
      const { rows: samples } = await fixture.admin.query<{ ms: number }>(
        `select extract(epoch from published_at - created_at) * 1000 as ms
           from outbox where seq > $1::bigint`,
        [afterSeq],
      );
      const ms = samples.map((s) => Number(s.ms));
      return {
        round: r,
        mode,
        rate,
        offered: rate,
        achievedRate: round(offered.achievedRate, 1),
        lateTicks: offered.lateTicks,
        events: ms.length,
        p50Ms: round(quantile(ms, 0.5), 2),
        p90Ms: round(quantile(ms, 0.9), 2),
        p99Ms: round(quantile(ms, 0.99), 2),
        maxMs: round(Math.max(...ms), 2),
        claimsPerEvent: round(stepCount('claim') / ms.length, 3),
        batchesPerEvent: round(stepCount('publish') / ms.length, 3),
        cpu,
      };
    };

    log(`run ${run}: latency warm-up`);
    for (const { mode, rate } of cells) await measure(mode, rate, -1, 1);
    for (let r = 0; r < params.latencyRounds; r++) {
      const line: string[] = [];
      for (const { mode, rate } of rotated(cells, r)) {
        const result = await measure(mode, rate, r, params.latencySeconds);
        rounds.push(result);
        line.push(
          `${mode}@${rate} p50 ${result.p50Ms} p99 ${result.p99Ms} claims/event ${result.claimsPerEvent}`,
        );
      }
      log(`run ${run}: latency round ${r + 1}/${params.latencyRounds}: ${line.join('; ')}`);
    }
    return rounds;
  } finally {
    for (const fixture of fixtures.values()) {
      await Promise.allSettled(fixture.relays.map((r) => r.process.stop()));
      await fixture.pool.end().catch(() => {});
      await fixture.admin.end().catch(() => {});
      await fixture.db.drop();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Summaries

type RunSummary = {
  /** Median events/s over rounds, per throughput variant. */
  eventsPerSec: Record<string, number>;
  /** Median over rounds of each variant's CPU seconds per 1,000 events, per process group. */
  cpuPer1000: Record<string, Record<string, number>>;
  /** Median over rounds of the machine's busy share while each variant ran. */
  machineBusy: Record<string, number>;
  /** Relay variants: median over rounds of the mean ms per claim / publish / mark step. */
  steps: Record<string, Record<string, number>>;
  /** Claim probe, per `query/stats`: median over rounds of events/s and of the mean claim ms. */
  claimProbe: Record<string, { eventsPerSec: number; meanClaimMs: number; maxClaimMs: number }>;
  /** Per cell `mode@rate`: median over rounds of p50/p99, and achieved rate. */
  latency: Record<
    string,
    {
      p50Ms: number;
      p99Ms: number;
      maxMs: number;
      achievedRate: number;
      claimsPerEvent: number;
      batchesPerEvent: number;
    }
  >;
  /** Paired per-round ratios, median over rounds. */
  ratios: Record<string, number>;
};

/** Throughput comparisons: [name, variant, baseline]. */
const throughputComparisons = (): [string, string, string][] => {
  const out: [string, string, string][] = [];
  const has = (key: string) => throughputVariants.some((v) => v.key === key);
  const add = (x: string, y: string) => {
    if (has(x) && has(y)) out.push([`${x}/${y}`, x, y]);
  };
  for (const k of params.relayCounts) add(`R${k}`, 'P1');
  for (const k of params.relayCounts) add(`R${k}`, 'Q1');
  add('Q1', 'P1');
  for (const p of params.producerCounts) if (p !== 1) add(`Q${p}`, `P${p}`);
  for (const k of params.staleRelayCounts) add(`S${k}`, 'P1');
  for (const p of params.producerCounts) if (p !== 1) add(`R${p}`, `P${p}`);
  for (const k of params.relayCounts) if (k !== 1) add(`R${k}`, 'R1');
  for (const k of params.staleRelayCounts) add(`R${k}`, `S${k}`);
  for (const p of params.producerCounts) if (p !== 1) add(`P${p}`, 'P1');
  return out;
};

function summarizeRun(
  throughput: ThroughputRound[],
  claimProbeRounds: ClaimProbeRound[],
  latency: LatencyRound[],
): RunSummary {
  const eventsPerSec: Record<string, number> = {};
  const cpuPer1000: Record<string, Record<string, number>> = {};
  const machineBusy: Record<string, number> = {};
  const steps: Record<string, Record<string, number>> = {};
  for (const variant of throughputVariants) {
    const rounds = throughput.filter((t) => t.variant === variant.key);
    if (rounds.length === 0) continue;
    if (variant.kind === 'relay') {
      const perStep: Record<string, number> = {};
      for (const key of Object.keys(rounds[0]?.steps ?? {}))
        perStep[key] = round(median(rounds.map((t) => t.steps?.[key] ?? Number.NaN)), 2);
      steps[variant.key] = perStep;
    }
    eventsPerSec[variant.key] = round(median(rounds.map((t) => t.eventsPerSec)), 1);
    machineBusy[variant.key] = round(median(rounds.map((t) => t.cpu.machineBusy)), 2);
    const groups: Record<string, number> = {};
    for (const group of Object.keys(rounds[0]?.cpu.seconds ?? {}))
      groups[group] = round(median(rounds.map((t) => ((t.cpu.seconds[group] ?? 0) * 1000) / t.events)), 3);
    cpuPer1000[variant.key] = groups;
  }
  const ratios: Record<string, number> = {};
  const tValue = (r: number, key: string) =>
    throughput.find((t) => t.round === r && t.variant === key)?.eventsPerSec;
  for (const [name, x, y] of throughputComparisons()) {
    if (!eventsPerSec[x] || !eventsPerSec[y]) continue;
    ratios[`throughput ${name}`] = pairedRatio(params.rounds, tValue, x, y).median;
  }

  const claimProbeSummary: RunSummary['claimProbe'] = {};
  const probeKey = (c: ClaimProbeCell) => `${c.query}/${c.stats}`;
  for (const key of [...new Set(claimProbeRounds.map(probeKey))]) {
    const rounds = claimProbeRounds.filter((c) => probeKey(c) === key);
    claimProbeSummary[key] = {
      eventsPerSec: round(median(rounds.map((c) => c.eventsPerSec)), 1),
      meanClaimMs: round(median(rounds.map((c) => c.meanClaimMs)), 2),
      maxClaimMs: round(Math.max(...rounds.map((c) => c.maxClaimMs)), 2),
    };
  }
  const probeValue = (r: number, key: string) =>
    claimProbeRounds.find((c) => c.round === r && probeKey(c) === key)?.eventsPerSec;
  for (const [name, x, y] of [
    ['production stale/fresh', 'production/stale', 'production/fresh'],
    ['production/not-exists stale', 'production/stale', 'not-exists/stale'],
    ['production/not-exists fresh', 'production/fresh', 'not-exists/fresh'],
    ['not-exists stale/fresh', 'not-exists/stale', 'not-exists/fresh'],
  ] as const) {
    if (claimProbeSummary[x] && claimProbeSummary[y])
      ratios[`claim probe ${name}`] = pairedRatio(params.rounds, probeValue, x, y).median;
  }

  const latencySummary: RunSummary['latency'] = {};
  for (const rate of params.rates) {
    for (const mode of params.modes) {
      const rounds = latency.filter((l) => l.mode === mode && l.rate === rate);
      if (rounds.length === 0) continue;
      latencySummary[`${mode}@${rate}`] = {
        p50Ms: round(median(rounds.map((l) => l.p50Ms)), 2),
        p99Ms: round(median(rounds.map((l) => l.p99Ms)), 2),
        maxMs: round(Math.max(...rounds.map((l) => l.maxMs)), 2),
        achievedRate: round(median(rounds.map((l) => l.achievedRate)), 1),
        claimsPerEvent: round(median(rounds.map((l) => l.claimsPerEvent)), 3),
        batchesPerEvent: round(median(rounds.map((l) => l.batchesPerEvent)), 3),
      };
    }
    for (const other of params.modes.filter((m) => m !== 'notify')) {
      if (!params.modes.includes('notify')) continue;
      for (const q of ['p50Ms', 'p99Ms'] as const) {
        const value = (r: number, key: string) =>
          latency.find((l) => l.round === r && l.rate === rate && l.mode === key)?.[q];
        ratios[`latency ${q.slice(0, 3)} notify/${other} @${rate}`] = pairedRatio(
          params.latencyRounds,
          value,
          'notify',
          other,
        ).median;
      }
    }
  }
  return {
    eventsPerSec,
    cpuPer1000,
    machineBusy,
    steps,
    claimProbe: claimProbeSummary,
    latency: latencySummary,
    ratios,
  };
}

// ---------------------------------------------------------------------------------------------
// Reporting

type RunResult = {
  run: number;
  durationSec: number;
  loadavgBefore: number[];
  loadavgAfter: number[];
  throughputRounds: ThroughputRound[];
  claimProbeRounds: ClaimProbeRound[];
  latencyRounds: LatencyRound[];
  summary: RunSummary;
};

type Report = {
  benchmark: 'relay-throughput';
  date: string;
  machine: ReturnType<typeof machineInfo>;
  node: string;
  postgres: Record<string, string>;
  kafka: { version: string; broker: string };
  parameters: typeof params;
  throughputVariants: ThroughputVariant[];
  latencyModes: typeof modeInfo;
  anchors: Record<string, string>;
  runs: RunResult[];
  acrossRuns: Record<string, { median: number; perRun: number[] }>;
};

const anchors = {
  oneRelay: '~5,000 events/s for one relay (JVM relays)',
  manyRelays: '14,000-18,000 events/s with many relays (JVM relays)',
  latency: 'single-digit-ms p50 commit-to-ack latency with NOTIFY',
};

function markdownReport(result: Report): string {
  const last = result.runs[result.runs.length - 1] as RunResult;
  const ratio = (name: string) => result.acrossRuns[name]?.median;
  const runsNote =
    result.runs.length > 1
      ? `median of the per-run medians over ${result.runs.length} runs`
      : 'single run: median of the paired per-round ratios (use --runs 3 for a median over runs)';
  const lines: string[] = ['# Relay throughput and latency results', ''];
  lines.push(
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}) · Kafka ${result.kafka.version} (${result.kafka.broker})`,
    '',
    `Parameters: ${params.runs} run(s); throughput ${params.rounds} rounds × ${params.events} events over ${params.aggregates} aggregates, batch ${params.batchSize}, ${params.topicPartitions} partitions; latency ${params.latencyRounds} rounds × ${params.latencySeconds} s per cell, ${params.txPerSec} transactions/s.`,
    '',
  );
  if (params.throughput) {
    lines.push(
      `## Throughput (run ${last.run}: median over rounds)`,
      '',
      `Backlog of ${params.events} events committed at once into an outbox holding ${params.history} published rows; fresh = ANALYZE in the backlog's transaction, stale = statistics of the drained outbox.`,
      '',
    );
    const rows = throughputVariants.map((v) => {
      const cpu = last.summary.cpuPer1000[v.key] ?? {};
      return [
        `${v.key}: ${v.label}`,
        last.summary.eventsPerSec[v.key]?.toFixed(0) ?? 'n/a',
        times(ratio(`throughput ${v.key}/P1`) ?? (v.key === 'P1' ? 1 : undefined)),
        Object.entries(cpu)
          .map(([group, s]) => `${group} ${s.toFixed(2)}`)
          .join(', '),
        `${((last.summary.machineBusy[v.key] ?? Number.NaN) * 100).toFixed(0)}%`,
      ];
    });
    lines.push(
      ...table(['variant', 'events/s', '÷ P1', 'CPU s per 1,000 events', 'machine busy'], rows),
      '',
      'Relay steps, mean ms per call over all relays (claims that found nothing included):',
      '',
      ...table(
        ['variant', 'claim ms', 'publish ms', 'mark ms', 'batches', 'claim plan (first round)'],
        throughputVariants
          .filter((v) => v.kind === 'relay')
          .map((v) => {
            const st = last.summary.steps[v.key] ?? {};
            const plan = last.throughputRounds.find((t) => t.variant === v.key)?.claimPlan ?? 'n/a';
            return [
              v.key,
              String(st.claimMs),
              String(st.publishMs),
              String(st.markMs),
              String(st.batches),
              plan,
            ];
          }),
      ),
      '',
      `Ratios (${runsNote}):`,
      '',
    );
    lines.push(
      ...table(
        ['ratio', 'value'],
        throughputComparisons()
          .filter(([name]) => ratio(`throughput ${name}`) !== undefined)
          .map(([name]) => [name, times(ratio(`throughput ${name}`))]),
      ),
      '',
    );
  }
  if (params.claimProbe) {
    lines.push(
      `## Claim statement alone (run ${last.run}: median over rounds)`,
      '',
      `One connection drains a backlog of ${params.claimProbeEvents} events with claim + markPublished, no Kafka. production = claimBatch (\`o.seq = (select min(seq) … status <> 'published')\`); not-exists = the NOT EXISTS form it replaced.`,
      '',
      ...table(
        ['query / statistics', 'events/s', 'mean claim ms', 'max claim ms'],
        Object.entries(last.summary.claimProbe).map(([key, v]) => [
          key,
          v.eventsPerSec.toFixed(0),
          v.meanClaimMs.toFixed(1),
          v.maxClaimMs.toFixed(1),
        ]),
      ),
      '',
      ...table(
        ['ratio (events/s)', 'value'],
        Object.keys(result.acrossRuns)
          .filter((k) => k.startsWith('claim probe'))
          .map((name) => [name.replace('claim probe ', ''), times(ratio(name))]),
      ),
      '',
    );
  }
  if (params.latency) {
    lines.push(
      `## Commit-to-ack latency, one relay (run ${last.run}: median over rounds of each round's percentile)`,
      '',
    );
    const rows: string[][] = [];
    for (const rate of params.rates)
      for (const mode of params.modes) {
        const cell = last.summary.latency[`${mode}@${rate}`];
        if (!cell) continue;
        rows.push([
          `${rate}/s`,
          modeInfo[mode].label,
          cell.achievedRate.toFixed(0),
          cell.p50Ms.toFixed(1),
          cell.p99Ms.toFixed(1),
          cell.maxMs.toFixed(1),
          cell.claimsPerEvent.toFixed(2),
          cell.batchesPerEvent.toFixed(2),
        ]);
      }
    lines.push(
      ...table(
        [
          'offered',
          'mode',
          'achieved/s',
          'p50 ms',
          'p99 ms',
          'max ms',
          'claims per event',
          'batches per event',
        ],
        rows,
      ),
      '',
    );
    const latencyRatios = Object.keys(result.acrossRuns).filter((k) => k.startsWith('latency'));
    if (latencyRatios.length > 0)
      lines.push(
        `Paired ratios (${runsNote}):`,
        '',
        ...table(
          ['ratio', 'value'],
          latencyRatios.map((name) => [name.replace('latency ', ''), times(ratio(name), 3)]),
        ),
        '',
      );
  }
  if (result.runs.length > 1) {
    lines.push('## Per-run ratios', '');
    lines.push(
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
  lines.push(`Anchors: ${Object.values(anchors).join('; ')}.`, '');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main

const report: Report = {
  benchmark: 'relay-throughput',
  date: new Date().toISOString(),
  machine: machineInfo(),
  node: process.version,
  postgres: await postgresInfo(testPostgresUrl),
  kafka: { version: 'unknown', broker: 'devstack test broker: single node, KRaft, C1-only JVM, 768 MB heap' },
  parameters: params,
  throughputVariants,
  latencyModes: modeInfo,
  anchors,
  runs: [],
  acrossRuns: {},
};

log('starting the broker');
const broker = await startBenchBroker('bench-relay');
report.kafka.version = broker.version;
try {
  const brokers = broker.broker.brokers;
  const brokerPid = broker.broker.pid ?? 0;
  for (let run = 1; run <= params.runs; run++) {
    const startedAt = Date.now();
    const loadavgBefore = loadavg();
    const throughputRounds = params.throughput ? await throughputPhase(run, brokers, brokerPid) : [];
    const claimProbeRounds = params.claimProbe ? await claimProbe(run) : [];
    const latencyRounds = params.latency ? await latencyPhase(run, brokers, brokerPid) : [];
    const result: RunResult = {
      run,
      durationSec: round((Date.now() - startedAt) / 1000, 1),
      loadavgBefore,
      loadavgAfter: loadavg(),
      throughputRounds,
      claimProbeRounds,
      latencyRounds,
      summary: summarizeRun(throughputRounds, claimProbeRounds, latencyRounds),
    };
    report.runs.push(result);
    log(`run ${run}: ${result.durationSec} s`);
  }
} finally {
  await broker.dispose();
}
report.acrossRuns = acrossRuns(report.runs.map((r) => r.summary.ratios));

writeResults(args.out, report, markdownReport(report));
log(`wrote ${args.out}.json and ${args.out}.md`);
