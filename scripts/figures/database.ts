import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import type { OutboxMigrations } from '../../bench/outbox-migrations.ts';
import type { RetentionResults } from '../../bench/retention/report.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { Report as WritePath } from '../../bench/write-path/report.ts';
import { day, load, num } from './format.ts';
import { type FigureTable, ofFile } from './types.ts';

const WRITE_PATH = resultsFile('write-path.json');
const change = (ratio: number | undefined) =>
  ratio === undefined ? '—' : `${ratio >= 1 ? '+' : '−'}${num(Math.abs(ratio - 1) * 100, 1)}%`;

/** Which comparisons the write path is read by, and what each one isolates. */
const COMPARISONS: [string, string][] = [
  ['F1/F0', 'the outbox row in production’s one-statement write (F1 against F0)'],
  ['E1/E0', 'the outbox row in the earlier two-statement write'],
  ['B/A', 'the outbox row as a second Prisma call (the textbook way)'],
  ['F1/A', 'production’s write against the textbook business-only write'],
];

export const writePath = ofFile<WritePath>(WRITE_PATH, (results, link) => {
  const last = results.runs.at(-1);
  if (!last) throw new Error(`${WRITE_PATH} has no run`);
  const ratio = (name: string) => results.acrossRuns[name]?.median;
  const { latency, throughput } = last.summary;
  return [
    `Ratios, median over ${results.parameters.runs} runs of the paired per-round ratios (latency: + is slower; throughput: − is fewer transactions per second):`,
    markdownTable(
      ['comparison', 'c=1 median latency', 'c=1 p99 latency', 'c=8 throughput', 'c=32 throughput'],
      COMPARISONS.map(([name, what]) => [
        what,
        change(ratio(`latencyMedian ${name}`)),
        change(ratio(`latencyP99 ${name}`)),
        change(ratio(`throughput c=8 ${name}`)),
        change(ratio(`throughput c=32 ${name}`)),
      ]),
    ),
    `Absolute figures of the last run (median over ${results.parameters.rounds} rounds):`,
    markdownTable(
      ['variant', 'statements per transaction', 'c=1 median ms', 'c=1 p99 ms', 'c=8 tx/s', 'c=32 tx/s'],
      results.variants.map(({ key, label, statementsPerTx }) => [
        `${key}: ${label}`,
        String(statementsPerTx),
        num(latency[key]?.medianMs, 2),
        num(latency[key]?.p99Ms, 1),
        num(throughput['8']?.[key]),
        num(throughput['32']?.[key]),
      ]),
    ),
    `${link(WRITE_PATH)}: ${day(results.date)}, last run at ${load(last.loadavgBefore, last.loadavgAfter)}.`,
  ].join('\n\n');
});

const RETENTION = resultsFile('retention.json');

export const retention = ofFile<RetentionResults>(RETENTION, (results, link) => {
  const { published, retentionDays, days } = results.parameters;
  const ways = [
    {
      ...results.retention.A,
      name: `A: batched delete, ${num(results.parameters.batch)} rows a batch (production)`,
    },
    { ...results.retention.B, name: 'B: detach and drop day partitions' },
  ];
  const claim = ({ medianMs, p99Ms }: { medianMs: number; p99Ms: number }) =>
    `${num(medianMs, 1)} / ${num(p99Ms, 1)} ms`;
  return [
    `${num(published)} published rows over ${days} days, those older than ${retentionDays} days removed:`,
    markdownTableOf(ways, {
      retention: ({ name }) => name,
      'rows removed': (way) => num(way.rowsDeleted),
      seconds: (way) => num(way.totalMs / 1000, 2),
      'rows/s': (way) => num(way.rowsPerSec),
      'WAL MiB': (way) => num(way.walMiB, 1),
      'claim p50 / p99 meanwhile': (way) => claim(way.claimDuring),
      'claim on a table left alone': (way) => claim(way.baselineClaimDuring),
    }),
    `${link(RETENTION)}: ${day(results.date)}, ${load(results.loadavgBefore, results.loadavgAfter)}.`,
  ].join('\n\n');
});

const OUTBOX_MIGRATIONS = [resultsFile('outbox-migrations.json'), resultsFile('outbox-migrations.100k.json')];

export const outboxMigrations: FigureTable = {
  sources: OUTBOX_MIGRATIONS,
  render({ read, link }) {
    const runs = OUTBOX_MIGRATIONS.map((path) => ({ path, results: read<OutboxMigrations>(path) }));
    const seconds = (ms: number) => `${num(ms / 1000, ms < 1000 ? 3 : 1)} s`;
    return [
      markdownTable(
        ['outbox rows', 'step', 'took', 'longest insert beside it', 'longest read beside it'],
        runs.flatMap(({ results }) =>
          results.steps.map((step) => [
            num(results.parameters.rows),
            step.step,
            seconds(step.durationMs),
            seconds(step.writer.longestMs),
            seconds(step.reader.longestMs),
          ]),
        ),
      ),
      runs
        .map(
          ({ path, results }) =>
            `${link(path)}: ${day(results.date)}, ${load(results.loadavgBefore, results.loadavgAfter)}`,
        )
        .join('; ')
        .concat(' (a shared machine under heavy load: durations are noisy, their proportions less so).'),
    ].join('\n\n');
  },
};
