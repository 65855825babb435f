/**
 * What the polling relay costs per event when the outbox is quiet: a steady offered rate of
 * events (each in its own transaction, as orders are written), one relay, and per event published
 * the relay's SQL statements and round trips (its own metrics: claims, with a mark or not, marks
 * sent alone, lease renewals; a clean run writes nothing else), its batches, the outbox rows
 * updated (pg_stat_user_tables, over the whole run: the server reports them late) and the relay's
 * CPU seconds (/proc). pg_stat_statements is not used: the shared test server does not preload it.
 * Counts do not depend on the machine's load; CPU seconds and latency do, so variants run
 * interleaved (A/B/A/B, the order rotating per round) and are compared as ratios within a run.
 *
 *   node bench/relay-low-rate.ts [--help]
 *
 * A variant is a name and the relay's RELAY_MARK_WITH_NEXT_CLAIM_MS; each has its own database,
 * topic and relay process (production defaults otherwise: NOTIFY, poll 1 s, claims of 16 to 1,000).
 * Every relay statement is one round trip (named prepared statements, no BEGIN/COMMIT), so the
 * statement count is the round-trip count. Latency: the relay's own commit-to-broker-ack
 * histogram (its mean, exact from its sum and count), and published_at − created_at from the
 * outbox (the mark's time: with the mark deferred it includes the wait for the next claim).
 *
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { insertEventsSql } from './relay/backlog.ts';
import { type RelayFixture, relayFixture, stopRelayFixture } from './relay/measureRelays.ts';
import { measurePublishing, openLoop, type Relay, type RelaySettings, relayPids } from './relay/relays.ts';
import { defineBench, int, ints, text } from './support/bench.ts';
import { benchKafka, startBenchBroker } from './support/kafka.ts';
import { median, quantile, rotated, round } from './support/stats.ts';

const bench = defineBench({
  name: 'relay-low-rate',
  about:
    'What the polling relay costs per event when the outbox is quiet: statements, round trips, rows updated and CPU per event at steady low rates.',
  options: {
    rates: ints('20,80', 'offered rates, events/s, one transaction per event'),
    seconds: int(15, 'seconds per rate'),
    rounds: int(2, 'rounds; the variants interleaved, the order rotating per round'),
    variants: text(
      'mark-at-once=0,mark-with-next-claim=100',
      'name=RELAY_MARK_WITH_NEXT_CLAIM_MS per variant',
      (name, value) =>
        value.split(',').map((spec) => {
          const [variant = '', ms = ''] = spec.split('=');
          if (!variant || !/^\d+$/.test(ms)) throw new Error(`--${name}: name=ms, not ${spec}`);
          return { name: variant, markWithNextClaimMs: Number(ms) };
        }),
    ),
  },
});
const { rates, seconds, rounds, variants } = bench.args;
const log = bench.log;
const AGGREGATES = 1000;

/** `rate` events/s for `seconds`, one transaction each, on a schedule fixed in advance (open loop). */
async function offer(pool: pg.Pool, rate: number, from: number) {
  const events = rate * seconds;
  const loop = await openLoop(events, 1000 / rate, (i) =>
    pool.query(insertEventsSql(), [1, AGGREGATES, from + i, 'low']),
  );
  return { events, achievedRate: round(events / loop.seconds, 1) };
}

/** A variant's database, topic and relay, and a pool for the load. */
type Fixture = RelayFixture<RelaySettings> & {
  name: string;
  markWithNextClaimMs: number;
  pool: pg.Pool;
  relay: Relay;
};

type Cell = {
  round: number;
  variant: string;
  rate: number;
  events: number;
  achievedRate: number;
  /** Per event published: statements (= round trips), and which. */
  statements: number;
  claims: number;
  marks: number;
  renewals: number;
  batches: number;
  relayCpuSecondsPer1000: number;
  /** The relay's commit-to-broker-ack histogram: its mean over the cell, ms. */
  commitToAckMeanMs: number;
  publishedAtP50Ms: number;
  publishedAtP99Ms: number;
};

/** From one scrape of the relay's /metrics: its commit-to-ack histogram and its lease renewals. */
async function relayCounters(relay: Relay): Promise<{ ackSum: number; ackCount: number; renewals: number }> {
  const text = await (await fetch(`${relay.process.url}/metrics`)).text();
  const value = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(text)?.[1] ?? 0);
  return {
    ackSum: value('outbox_commit_to_publish_seconds_sum'),
    ackCount: value('outbox_commit_to_publish_seconds_count'),
    renewals: value('outbox_relay_lease_renewals_total'),
  };
}

async function outboxUpdates(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    `select n_tup_upd::text as n from pg_stat_user_tables where relname = 'outbox'`,
  );
  return Number(rows[0]?.n ?? 0);
}

const report = {
  ...(await bench.header(testPostgresUrl)),
  parameters: { rates, seconds, rounds, variants, aggregates: AGGREGATES },
  note: 'The machine is shared and loaded (other test suites and brokers run beside it): counts per event do not depend on it; CPU seconds and latencies are compared only as ratios between the variants, interleaved in this run.',
  cells: [] as Cell[],
  summary: [] as Record<string, unknown>[],
  /** Per variant, over the whole run (warm-up included): outbox rows updated per event. */
  rowsUpdated: {} as Record<string, { events: number; rowsUpdated: number; perEvent: number }>,
};

log('starting the broker');
const broker = await startBenchBroker('bench-relay-low-rate');
const fixtures: Fixture[] = [];
try {
  const brokers = broker.broker.brokers;
  const kafka = benchKafka('bench-relay-low-rate', brokers);
  for (const variant of variants) {
    const settings = {
      batchSize: 1000,
      topicPartitions: 6,
      env: { RELAY_MARK_WITH_NEXT_CLAIM_MS: String(variant.markWithNextClaimMs) },
    };
    const fixture = await relayFixture(kafka, brokers, 1, settings, 1000, `lowrate-${variant.name}`);
    const pool = new pg.Pool({ connectionString: fixture.db.url, max: 8 });
    fixtures.push({ ...fixture, ...variant, pool, relay: fixture.relays[0] as Relay });
  }
  let cursor = 0;
  const measure = async (fixture: Fixture, rate: number, r: number): Promise<Cell> => {
    const counters0 = await relayCounters(fixture.relay);
    const groups = { relay: relayPids([fixture.relay]) };
    // Every event is marked (the last batch's too, alone or not): the counts are complete.
    const measured = await measurePublishing(
      fixture.admin,
      [fixture.relay],
      groups,
      `${fixture.name} @${rate}/s`,
      () => offer(fixture.pool, rate, cursor),
    );
    const { offered, cpu, stepCount, delaysMs: ms } = measured;
    cursor += offered.events;
    const counters = await relayCounters(fixture.relay);
    const n = ms.length;
    const claims = stepCount('claim');
    const marks = stepCount('mark');
    const renewals = counters.renewals - counters0.renewals;
    return {
      round: r,
      variant: fixture.name,
      rate,
      events: n,
      achievedRate: offered.achievedRate,
      statements: round((claims + marks + renewals) / n, 3),
      claims: round(claims / n, 3),
      marks: round(marks / n, 3),
      renewals: round(renewals / n, 3),
      batches: round(stepCount('publish') / n, 3),
      relayCpuSecondsPer1000: round(((cpu.seconds.relay ?? Number.NaN) * 1000) / n, 3),
      commitToAckMeanMs: round(
        ((counters.ackSum - counters0.ackSum) / Math.max(1, counters.ackCount - counters0.ackCount)) * 1000,
        2,
      ),
      publishedAtP50Ms: round(quantile(ms, 0.5), 1),
      publishedAtP99Ms: round(quantile(ms, 0.99), 1),
    };
  };
  const updatesAtStart = new Map<string, number>();
  for (const fixture of fixtures) updatesAtStart.set(fixture.name, await outboxUpdates(fixture.admin));
  log('warm-up');
  for (const fixture of fixtures) await measure(fixture, 20, -1);
  for (let r = 0; r < rounds; r++) {
    for (const rate of rates) {
      for (const fixture of rotated(fixtures, r)) {
        const cell = await measure(fixture, rate, r);
        report.cells.push(cell);
        log(
          `round ${r + 1}/${rounds} ${fixture.name}@${rate}/s: ${cell.statements} statements/event ` +
            `(${cell.claims} claims, ${cell.marks} marks alone), ${cell.batches} batches/event, ` +
            `${cell.relayCpuSecondsPer1000} relay CPU s/1000, ack mean ${cell.commitToAckMeanMs} ms`,
        );
      }
    }
  }
  // A backend reports its row counts up to 10 s late once idle; the relays poll every second.
  log('waiting for the row counts');
  await sleep(12_000);
  for (const fixture of fixtures) {
    const { rows } = await fixture.admin.query<{ n: number }>('select count(*)::int as n from outbox');
    const events = rows[0]?.n ?? 0;
    const rowsUpdated = (await outboxUpdates(fixture.admin)) - (updatesAtStart.get(fixture.name) ?? 0);
    report.rowsUpdated[fixture.name] = { events, rowsUpdated, perEvent: round(rowsUpdated / events, 3) };
  }
} finally {
  for (const fixture of fixtures) {
    await fixture.pool.end().catch(() => {});
    await stopRelayFixture(fixture).catch(() => {});
  }
  await broker.dispose();
}

// Per rate and variant: medians over rounds; CPU and latency as ratios to the first variant,
// paired per round.
const base = variants[0]?.name;
const summary = rates.flatMap((rate) =>
  variants.map(({ name }) => {
    const cells = report.cells.filter((c) => c.rate === rate && c.variant === name);
    const med = (f: (c: Cell) => number) => round(median(cells.map(f)), 3);
    const ratio = (f: (c: Cell) => number) =>
      round(
        median(
          cells.map((c) => {
            const b = report.cells.find((x) => x.rate === rate && x.variant === base && x.round === c.round);
            return b ? f(c) / f(b) : Number.NaN;
          }),
        ),
        2,
      );
    return {
      rate,
      variant: name,
      statementsPerEvent: med((c) => c.statements),
      claimsPerEvent: med((c) => c.claims),
      marksAlonePerEvent: med((c) => c.marks),
      renewalsPerEvent: med((c) => c.renewals),
      batchesPerEvent: med((c) => c.batches),
      relayCpuRatio: ratio((c) => c.relayCpuSecondsPer1000),
      commitToAckMeanRatio: ratio((c) => c.commitToAckMeanMs),
      publishedAtP50Ratio: ratio((c) => c.publishedAtP50Ms),
      publishedAtP99Ratio: ratio((c) => c.publishedAtP99Ms),
    };
  }),
);
report.summary.push(...summary);
const markdown = [
  '# Relay at low rates: cost per event',
  '',
  `${rates.join(' and ')} events/s offered into one outbox for ${seconds} s per cell, ${rounds} rounds, variants interleaved (${variants.map((v) => `${v.name}: RELAY_MARK_WITH_NEXT_CLAIM_MS=${v.markWithNextClaimMs}`).join(', ')}). ${report.note}`,
  '',
  "Per event published, medians over rounds. Statements: the relay's claims (with a mark or not), marks sent alone and lease renewals, from its own metrics; each is one round trip (named prepared statements, no BEGIN/COMMIT). Ratios to the first variant, paired per round.",
  '',
  ...markdownTableLinesOf(summary, {
    'rate /s': (s) => s.rate,
    variant: (s) => s.variant,
    statements: (s) => s.statementsPerEvent,
    claims: (s) => s.claimsPerEvent,
    'marks alone': (s) => s.marksAlonePerEvent,
    renewals: (s) => s.renewalsPerEvent,
    batches: (s) => s.batchesPerEvent,
    'relay CPU (ratio)': (s) => s.relayCpuRatio,
    'commit→ack mean (ratio)': (s) => s.commitToAckMeanRatio,
    'published_at p50 / p99 (ratio)': (s) => `${s.publishedAtP50Ratio} / ${s.publishedAtP99Ratio}`,
  }),
  '',
  `Outbox rows updated per event over the whole run (pg_stat_user_tables, read 12 s after the last cell): ${Object.entries(
    report.rowsUpdated,
  )
    .map(([name, r]) => `${name} ${r.perEvent} (${r.rowsUpdated} for ${r.events} events)`)
    .join(', ')}.`,
  '',
  'Every cell:',
  '',
  ...markdownTableLinesOf(report.cells, {
    round: (c) => c.round + 1,
    rate: (c) => c.rate,
    variant: (c) => c.variant,
    events: (c) => c.events,
    'achieved /s': (c) => c.achievedRate,
    statements: (c) => c.statements,
    claims: (c) => c.claims,
    'marks alone': (c) => c.marks,
    batches: (c) => c.batches,
    'relay CPU s / 1000': (c) => c.relayCpuSecondsPer1000,
    'commit→ack mean ms': (c) => c.commitToAckMeanMs,
    'published_at p50 / p99 ms': (c) => `${c.publishedAtP50Ms} / ${c.publishedAtP99Ms}`,
  }),
].join('\n');
bench.write(report, markdown, 'off');
