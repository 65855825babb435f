import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import type { Report as ConsumerResults } from '../../bench/consumer/report.ts';
import type { Report as RelayResults } from '../../bench/relay/report.ts';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import { day, load, num, percent, times } from './format.ts';
import { ofFile } from './types.ts';

type Cpu = Record<string, number>;

const cpu = (parts: Cpu | undefined) =>
  Object.entries(parts ?? {})
    .map(([name, seconds]) => `${name} ${num(seconds, 2)}`)
    .join(', ');

const RELAY = resultsFile('relay-throughput.json');

export const relayThroughput = ofFile<RelayResults>(RELAY, (results, link) => {
  const run = results.runs[0];
  if (!run) throw new Error(`${RELAY} has no run`);
  const { eventsPerSec, cpuPer1000, machineBusy, steps, latency } = run.summary;
  const ceiling = eventsPerSec.P1 ?? Number.NaN;
  const { events, aggregates, batchSize, rounds } = results.parameters;
  const throughput = markdownTable(
    ['variant', 'events/s', '÷ P1 (paired per round)', 'CPU s per 1,000 events', 'machine busy'],
    results.throughputVariants.map(({ key, label }) => [
      `${key}: ${label}`,
      num(eventsPerSec[key]),
      times(
        results.acrossRuns[`throughput ${key}/P1`]?.median ?? (eventsPerSec[key] ?? Number.NaN) / ceiling,
      ),
      cpu(cpuPer1000[key]),
      percent(machineBusy[key] ?? Number.NaN),
    ]),
  );
  const loop = markdownTable(
    ['relays', 'claim ms', 'publish ms', 'mark ms', 'batches'],
    Object.entries(steps).map(([key, step]) => [
      key,
      num(step.claimMs, 1),
      num(step.publishMs, 1),
      num(step.markMs, 1),
      num(step.batches),
    ]),
  );
  const modes: Record<string, { label: string }> = results.latencyModes;
  const ack = markdownTable(
    ['offered', 'mode', 'achieved/s', 'p50 ms', 'p99 ms', 'claims per event'],
    Object.entries(latency).map(([cell, figures]) => {
      const [mode = '', rate = ''] = cell.split('@');
      return [
        `${num(Number(rate))}/s`,
        modes[mode]?.label ?? mode,
        num(figures.achievedRate),
        num(figures.p50Ms, 1),
        num(figures.p99Ms, 1),
        num(figures.claimsPerEvent, 2),
      ];
    }),
  );
  return [
    `From a backlog of ${num(events)} events over ${num(aggregates)} aggregates, batches of ${batchSize}, median of ${rounds} rounds:`,
    throughput,
    'The relay loop, mean ms per call (claims that found nothing included):',
    loop,
    'Commit → broker ack, one relay, at a steady offered rate:',
    ack,
    `${link(RELAY)}: ${day(results.date)}, ${load(run.loadavgBefore, run.loadavgAfter)}.`,
  ].join('\n\n');
});

const CONSUMER = resultsFile('consumer-throughput.json');

export const consumerThroughput = ofFile<Written<ConsumerResults>>(CONSUMER, (results, link) => {
  const run = results.runs[0];
  if (!run) throw new Error(`${CONSUMER} has no run`);
  const { eventsPerSec, meanBatchSize, transactionsPerSec, cpuPer1000 } = run.summary;
  const bare = eventsPerSec.A ?? Number.NaN;
  const { events, partitions, rounds } = results.parameters;
  return [
    `From a backlog of ${num(events)} events on ${partitions} partitions, one consumer, median of ${rounds} rounds:`,
    markdownTableOf(results.variants, {
      variant: ({ key, label }) => `${key}: ${label}`,
      'events/s': ({ key }) => num(eventsPerSec[key]),
      '÷ A (paired per round)': ({ key }) =>
        times(results.acrossRuns[`${key}/A`]?.median ?? (eventsPerSec[key] ?? Number.NaN) / bare, 3),
      'transactions/s': ({ key }) => num(transactionsPerSec[key] ?? 0),
      'events per chunk': ({ key }) => (meanBatchSize[key] == null ? '—' : num(meanBatchSize[key] ?? 0, 1)),
      'CPU s per 1,000 events': ({ key }) => cpu(cpuPer1000[key]),
    }),
    `${link(CONSUMER)}: ${day(results.date)}, revision \`${results.run.revision}\`, tracing ${results.run.tracing}, ${load(run.loadavgBefore, run.loadavgAfter)}.`,
  ].join('\n\n');
});

/**
 * Inventory's stock lock against the rest of its statements, from the run's pg_stat_statements:
 * "282 of 396 ms per 1,000 events …, … take 0.04 ms" (docs/benchmarks.md, "Where the time goes").
 */
export const inventoryLockWait = ofFile<Written<ConsumerResults>>(CONSUMER, (results) => {
  const rows = results.runs.at(-1)?.summary.statements.I ?? [];
  const statement = (start: string) => {
    const found = rows.find((row) => row.query.startsWith(start));
    if (!found) throw new Error(`${CONSUMER}: no statement of I starts with "${start}"`);
    return found;
  };
  const lock = statement('select sku from stock where sku in');
  const again = statement('select sku, available from stock where sku = any');
  const total = rows.reduce((sum, row) => sum + row.execMsPer1000, 0);
  return (
    `${num(lock.execMsPer1000)} of ${num(total)} ms per 1,000 events in the run above), and little of that ` +
    `is work: the same rows locked again a statement later, by a transaction that holds them, take ${num(again.meanMs, 2)} ms`
  );
});
