/** The latency phase: one relay per poll interval, a steady offered load, commit-to-ack per event. */
import pg from 'pg';
import type { CpuReport } from '../support/cpu.ts';
import { benchKafka } from '../support/kafka.ts';
import { quantile, rotated, round } from '../support/stats.ts';
import { insertEventsSql } from './backlog.ts';
import { type RelayFixture, relayFixture, stopRelayFixture } from './measureRelays.ts';
import { type LatencyMode, log, modeInfo, params } from './params.ts';
import { measurePublishing, openLoop, relayPids, setNotifyTrigger } from './relays.ts';

export type LatencyRound = {
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

/**
 * Offer `rate` events/s for `seconds`: a transaction of rate/txPerSec events every 1/txPerSec s,
 * on a schedule fixed in advance (open loop: a slow insert does not delay the next one).
 */
async function offerLoad(pool: pg.Pool, rate: number, seconds: number) {
  const perTx = Math.max(1, Math.round(rate / params.txPerSec));
  const transactions = Math.round((rate * seconds) / perTx);
  const loop = await openLoop(transactions, (1000 * perTx) / rate, (i) =>
    pool.query(insertEventsSql(), [perTx, params.aggregates, i * perTx, 'lat']),
  );
  const events = transactions * perTx;
  return { events, achievedRate: events / loop.seconds, lateTicks: loop.lateTicks };
}

type LatencyFixture = RelayFixture & { pool: pg.Pool };

export async function latencyPhase(
  run: number,
  brokers: string[],
  brokerPid: number,
): Promise<LatencyRound[]> {
  const fixtures = new Map<number, LatencyFixture>();
  const rounds: LatencyRound[] = [];
  try {
    await openFixtures(fixtures, brokers);
    const cells = params.rates.flatMap((rate) => params.modes.map((mode) => ({ mode, rate })));
    const measure = (mode: LatencyMode, rate: number, r: number, seconds: number) =>
      measureCell(fixtures.get(modeInfo[mode].pollMs) as LatencyFixture, brokerPid, {
        mode,
        rate,
        r,
        seconds,
      });

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
      await fixture.pool.end().catch(() => {});
      await stopRelayFixture(fixture);
    }
  }
}

/** One database, topic and relay per poll interval the modes use, each in `fixtures` for the caller's cleanup. */
async function openFixtures(fixtures: Map<number, LatencyFixture>, brokers: string[]): Promise<void> {
  const kafka = benchKafka('bench-relay-latency', brokers);
  for (const pollMs of [...new Set(params.modes.map((m) => modeInfo[m].pollMs))]) {
    const fixture = await relayFixture(kafka, brokers, 1, params, pollMs, `lat${pollMs}`);
    fixtures.set(pollMs, { ...fixture, pool: new pg.Pool({ connectionString: fixture.db.url, max: 8 }) });
  }
}

/** One cell: offer the load, wait until all of it is published, then read each event's commit-to-ack. */
async function measureCell(
  fixture: LatencyFixture,
  brokerPid: number,
  cell: { mode: LatencyMode; rate: number; r: number; seconds: number },
): Promise<LatencyRound> {
  const { mode, rate, r, seconds } = cell;
  await setNotifyTrigger(fixture.admin, modeInfo[mode].notify);
  const groups = { relays: relayPids(fixture.relays), broker: [brokerPid] };
  const measured = await measurePublishing(
    fixture.admin,
    fixture.relays,
    groups,
    `latency ${mode} @${rate}/s`,
    () => offerLoad(fixture.pool, rate, seconds),
  );
  const { offered, cpu, stepCount, delaysMs: ms } = measured;
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
}
