/** One throughput measurement of K relay processes draining a backlog committed at once. */
import { topicFor } from '@outbox/contracts';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import type { Kafka } from 'kafkajs';
import type pg from 'pg';
import { cpuSince, cpuSnapshot } from '../support/cpu.ts';
import { createTopic, freshName } from '../support/kafka.ts';
import { round, timed } from '../support/stats.ts';
import { claimPlan, insertEventsSql, insertHistorySql } from './backlog.ts';
import {
  connect,
  type Relay,
  type RelaySettings,
  relayPids,
  relayPublished,
  relaySteps,
  startRelays,
  stepMeans,
  waitAllPublished,
} from './relays.ts';
import type { ThroughputRound, ThroughputVariant } from './throughputVariants.ts';

/** A measurement's relays and backlog: the relays' settings, published rows before the backlog, aggregates. */
export type RelayMeasureSettings = RelaySettings & { batchSize: number; history: number; aggregates: number };

/**
 * One database, topic and set of relays (per relay count in bench:relay's throughput, where the
 * fresh and stale variants share it; per setting in the benches that compare settings).
 */
export type RelayFixture<S extends RelaySettings = RelayMeasureSettings> = {
  count: number;
  settings: S;
  db: TestDatabase;
  admin: pg.Client;
  /** Topic prefix of the fixture's relays: `<prefix>order.events`. */
  prefix: string;
  relays: Relay[];
};

/** A fresh outbox database and topic, and `count` relays on them polling every `pollMs`. */
export async function relayFixture<S extends RelaySettings>(
  kafka: Kafka,
  brokers: string[],
  count: number,
  settings: S,
  pollMs: number,
  label = `relays${count}`,
): Promise<RelayFixture<S>> {
  const db = await createOutboxDatabase(`bench_relay_${count}`);
  const admin = await connect(db.url);
  const prefix = `${freshName(label)}.`;
  const fixture: RelayFixture<S> = { count, settings, db, admin, prefix, relays: [] };
  try {
    // Created up front, so no measurement includes topic creation.
    await createTopic(kafka, topicFor('order', prefix), settings.topicPartitions);
    fixture.relays = await startRelays(db, brokers, prefix, count, pollMs, `bench-${label}`, settings);
  } catch (err) {
    await stopRelayFixture(fixture);
    throw err;
  }
  return fixture;
}

export async function stopRelayFixture(fixture: RelayFixture<RelaySettings>): Promise<void> {
  await Promise.allSettled(fixture.relays.map((relay) => relay.process.stop()));
  await fixture.admin.end().catch(() => {});
  await fixture.db.drop();
}

/**
 * Prepare an outbox with `history` published rows and analyze it (the statistics of a drained
 * outbox), then commit `events` new rows in one transaction (one NOTIFY: the relays wake at the
 * commit). "fresh" also runs ANALYZE inside that transaction, so the planner knows about the
 * backlog from the first claim on; "stale" leaves the statistics of the drained outbox, which is
 * what a backlog after an outage meets until autovacuum re-analyzes the table. Timed from the
 * commit until the last row is marked published, both on the database clock.
 */
export async function measureRelays(
  fixture: RelayFixture,
  variant: ThroughputVariant,
  events: number,
  roundIndex: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  const { admin, relays, settings } = fixture;
  const prepareStart = performance.now();
  await admin.query('truncate outbox');
  if (settings.history > 0) await admin.query(insertHistorySql, [settings.history]);
  await admin.query('analyze outbox');
  const before = await Promise.all(relays.map(relayPublished));
  const stepsBefore = await Promise.all(relays.map(relaySteps));
  const groups = { relays: relayPids(relays), broker: [brokerPid] };
  await admin.query('begin');
  await admin.query(insertEventsSql(), [events, settings.aggregates, 0, 'agg']);
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
  const plan = await claimPlan(admin, settings.batchSize);
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
    ...timed(events, elapsedMs),
    perRelay,
    prepareMs: round(prepareMs, 1),
    firstPublishMs: round(Number(timing[0]?.first_ms), 1),
    steps,
    claimPlan: plan,
    cpu,
  };
}
