import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import type { RefusalCost } from '../../bench/refusal-cost.ts';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { MeasuredReport, Step, SystemResults } from '../../bench/system/records.ts';
import type { ReplyLocks, WhereTimeGoes } from '../../bench/where-time-goes.ts';
import { day, num, quietHost } from './format.ts';
import { atCapacity, variant } from './system.ts';
import { type FigureTable, ofFile, ofFiles, ofRuns } from './types.ts';

type Report = MeasuredReport;

const cpuAtCapacity = (report: Report) => atCapacity(report)?.cpuMsPerOrder.total;

const SHIPPED = resultsFile('system.shipped.json');
const SAMPLED = resultsFile('system.sampled.json');
const SAMPLED_2 = resultsFile('system.sampled.run-2.json');
const QUIET = resultsFile('system.quiet.json');

/** The demo as shipped (tracing to Zipkin, Prometheus) against the same code with tracing off, by run. */
export const tracingCost = ofRuns<SystemResults<Report>>(
  [
    { path: SHIPPED, label: 'every span exported' },
    { path: SAMPLED, label: 'sampled tracing, reads untraced, offsets every second; run 1' },
    { path: SAMPLED_2, label: 'the same, run 2, variants in the other order' },
    { path: QUIET, label: 'adaptive admission, relay batches of 1,000, an Intel host' },
  ],
  (runs, link) => {
    const pairs = runs.map(({ path, label, results }) => {
      const [shipped, off] = [variant(results, 'shipped', path), variant(results, 'current', path)];
      return { path, label, shipped, off, fixed: results.args['fixed-rate'] ?? '?' };
    });
    return markdownTableOf(pairs, {
      'revision, run': ({ shipped, label, path }) => `\`${shipped.revision}\`, ${label} (${link(path)})`,
      'shipped (orders/s)': ({ shipped }) => num(shipped.capacity),
      'tracing off': ({ off }) => num(off.capacity),
      ratio: ({ shipped, off }) => num(shipped.capacity / off.capacity, 2),
      'CPU ms/order at capacity, shipped / off': ({ shipped, off }) =>
        `${num(cpuAtCapacity(shipped), 2)} / ${num(cpuAtCapacity(off), 2)}`,
      'at the fixed rate, shipped / off': ({ shipped, off, fixed }) =>
        `${num(shipped.atFixedRate.cpuMsPerOrder.total, 2)} / ${num(off.atFixedRate.cpuMsPerOrder.total, 2)} (${fixed}/s)`,
    });
  },
);

/** Goodput: what the API accepted when offered 1.5× and 2× the capacity found, by variant and run. */
export const overloadGoodput: FigureTable = {
  sources: [SAMPLED, SAMPLED_2],
  render({ read, link }) {
    const rows = (['current', 'shipped'] as const).flatMap((name) =>
      [SAMPLED, SAMPLED_2].map((path, index) => ({
        run: `${name === 'current' ? 'tracing off' : 'shipped'}, run ${index + 1}`,
        report: variant(read<SystemResults<Report>>(path), name, path),
      })),
    );
    const steps = (report: Report, cell: (step: Step) => string, separator = ' / ') =>
      (report.overload ?? []).map(cell).join(separator);
    return [
      markdownTableOf(rows, {
        'variant, run': ({ run }) => run,
        offered: ({ report }) => steps(report, (step) => num(step.offeredRate)),
        'accepted/s (goodput ÷ capacity)': ({ report }) =>
          steps(
            report,
            (step) => `${num(step.achievedRate)} (${num(step.achievedRate / report.capacity, 2)})`,
          ),
        'e2e p99 of the accepted': ({ report }) => `${steps(report, (step) => num(step.latencyMs.p99))} ms`,
        'answer p99, accepted / shed (client side)': ({ report }) =>
          steps(
            report,
            (step) => `${num(step.answerP99Ms?.accepted)} / ${num(step.answerP99Ms?.shed)} ms`,
            ', ',
          ),
      }),
      `Run 1: ${link(SAMPLED)}; run 2: ${link(SAMPLED_2)}.`,
    ].join('\n\n');
  },
};

const LEVERS: { label: string; paths: string[] }[] = [
  {
    label: 'offsets committed after every chunk (`e1e635b`)',
    paths: [resultsFile('where-time-goes.commit-per-chunk.json')],
  },
  {
    label: 'offsets committed every second (`02349a9`)',
    paths: [resultsFile('where-time-goes.commit-every-second.json')],
  },
  {
    label: 'relay linger 0 (the default at the time), runs 1 and 2',
    paths: [
      resultsFile('where-time-goes.linger-0.run-1.json'),
      resultsFile('where-time-goes.linger-0.run-2.json'),
    ],
  },
  {
    label: '`RELAY_LINGER_MS=25`, runs 1 and 2',
    paths: [
      resultsFile('where-time-goes.linger-25.run-1.json'),
      resultsFile('where-time-goes.linger-25.run-2.json'),
    ],
  },
  {
    label: 'each batch marked at once (`RELAY_MARK_WITH_NEXT_CLAIM_MS=0`), runs 1 and 2',
    paths: [
      resultsFile('where-time-goes.mark-at-once.run-1.json'),
      resultsFile('where-time-goes.mark-at-once.run-2.json'),
    ],
  },
  {
    label: "the mark with the next claim (100 ms, today's default), runs 1 and 2",
    paths: [
      resultsFile('where-time-goes.mark-with-next-claim.run-1.json'),
      resultsFile('where-time-goes.mark-with-next-claim.run-2.json'),
    ],
  },
];

/** Two levers at a low steady rate, one bench:where-time-goes run each: CPU, statements and latency per order. */
export const leversAtLowRate: FigureTable = {
  sources: LEVERS.flatMap((lever) => lever.paths),
  render({ read, link }) {
    const rows = LEVERS.map(({ label, paths }) => {
      const runs = paths.map((path) => read<WhereTimeGoes>(path));
      const each = (pick: (run: WhereTimeGoes) => string) => runs.map(pick).join(', ');
      return [
        `${label}: ${paths.map((path) => link(path)).join(', ')}`,
        each((run) => num(run.cpuMsPerOrder.total, 2)),
        each((run) => num(run.cpuMsPerOrder.kafka, 2)),
        each((run) => num(run.statements.reduce((sum, s) => sum + s.calls, 0) / run.accepted, 1)),
        `${each((run) => `${num(run.latencyMs.p50)} / ${num(run.latencyMs.p99)}`)} ms`,
      ];
    });
    return markdownTable(
      ['lever', 'total CPU ms/order', 'Kafka JVM', 'statements/order', 'e2e p50 / p99'],
      rows,
    );
  },
};

const REPLY_LOCKS = [
  {
    label: 'each partition alone (`KAFKA_CHUNK_LINGER_MS=0`)',
    path: resultsFile('reply-locks.linger-0.json'),
  },
  { label: 'a 5 ms linger', path: resultsFile('reply-locks.linger-5.json') },
  { label: 'a 5 ms linger, run 2', path: resultsFile('reply-locks.linger-5.run-2.json') },
];
const REPLY_LOCKS_AT_LOAD = [
  {
    label: 'each partition alone (`KAFKA_CHUNK_LINGER_MS=0`)',
    path: resultsFile('where-time-goes.reply-locks.linger-0.json'),
  },
  { label: 'a 5 ms linger', path: resultsFile('where-time-goes.reply-locks.linger-5.json') },
];

/** The reply consumer's lock statement: a fixed set of orders, then a saturated 40/s window. */
export const replyLocks: FigureTable = {
  sources: [...REPLY_LOCKS, ...REPLY_LOCKS_AT_LOAD].map((entry) => entry.path),
  render({ read, link }) {
    const fixed = REPLY_LOCKS.map(({ label, path }) => {
      const run = read<Written<ReplyLocks>>(path);
      return [
        `${label}: ${link(path)}`,
        `${num(run.counts.orders)} at ${num(run.rate)}/s`,
        num(run.counts.lockCallsPerOrder, 2),
        num(run.counts.lockRowsPerOrder, 2),
        num(run.counts.replyTransactionsPerOrder, 2),
        num(run.run.loadBefore[0], 1),
      ];
    });
    const atLoad = REPLY_LOCKS_AT_LOAD.map(({ label, path }) => {
      const run = read<Written<WhereTimeGoes>>(path);
      const of = (pattern: RegExp) =>
        run.statements.find((s) => s.database === 'orders' && pattern.test(s.query)) ?? { calls: 0, rows: 0 };
      const lock = of(/from orders where id = any.*for update/);
      const dedup = of(/^insert into processed_events/);
      return [
        `${label}, window of 20 s: ${link(path)}`,
        `${num(run.accepted)} at ${num(run.rate)}/s offered`,
        num(lock.calls / run.accepted, 2),
        num(lock.rows / run.accepted, 2),
        num(dedup.calls / run.accepted, 2),
        num(run.run.loadBefore[0], 1),
      ];
    });
    return markdownTable(
      [
        'reply consumer',
        'orders',
        'lock calls per order',
        'order rows locked per order',
        'reply transactions per order',
        'load average',
      ],
      [...fixed, ...atLoad],
    );
  },
};

const BATCHING = [
  resultsFile('system.batching-at-low-rate.json'),
  resultsFile('system.batching-at-low-rate.run-2.json'),
] as const;

/** A variant's extra environment as its run gave it (`--variant-env name:KEY=VALUE`), or "defaults". */
function settingsOf(results: SystemResults<Report>, name: string, none = 'the defaults'): string {
  const env = ((results.args['variant-env'] ?? []) as string[])
    .filter((spec) => spec.startsWith(`${name}:`))
    .map((spec) => `\`${spec.slice(name.length + 1)}\``);
  return env.length ? env.join(', ') : none;
}

/**
 * What the relays' and consumers' lingers buy at low rates, as shipped, against the reference
 * revision of the performance targets: CPU per order and latency at a fixed 30/s and at 50/s, two
 * runs with the variants in opposite orders.
 */
export const batchingAtLowRate = ofFiles<Written<SystemResults<Report>> & { args: { reference: string } }>(
  BATCHING,
  (runs, link) => {
    const [first] = runs;
    if (!first) throw new Error('no batching run');
    const reference = first.args.reference;
    const half = (report: Report) => report.atHalfCapacity;
    const halfRate = num(half(first.reports[0] as Report)?.offeredRate);
    const perRun = (name: string, pick: (report: Report, ref: Report) => string) =>
      runs
        .map((results, index) =>
          pick(
            variant(results, name, BATCHING[index] ?? ''),
            variant(results, reference, BATCHING[index] ?? ''),
          ),
        )
        .join(' / ');
    const ratio = (value: number | undefined, of: number | undefined) =>
      `${num(value, 1)} (${num((value ?? Number.NaN) / (of ?? Number.NaN), 2)}×)`;
    const rows = first.reports.map((report) => [
      `${report.variant} (\`${report.revision}\`): ${settingsOf(first, report.variant)}`,
      perRun(report.variant, (r, ref) =>
        ratio(r.atFixedRate?.cpuMsPerOrder.total, ref.atFixedRate?.cpuMsPerOrder.total),
      ),
      perRun(report.variant, (r, ref) => ratio(half(r)?.cpuMsPerOrder.total, half(ref)?.cpuMsPerOrder.total)),
      perRun(
        report.variant,
        (r) => `${num(r.atFixedRate?.latencyMs.p50)}, ${num(r.atFixedRate?.latencyMs.p99)}`,
      ),
      perRun(report.variant, (r) => `${num(half(r)?.latencyMs.p50)}, ${num(half(r)?.latencyMs.p99)}`),
    ]);
    const loads = runs.flatMap((results) =>
      results.reports.flatMap((r) => [r.atFixedRate, half(r)].map((step) => step?.loadavg[0] ?? Number.NaN)),
    );
    return [
      markdownTable(
        [
          'variant: settings',
          `CPU ms per order at ${first.args['fixed-rate']}/s (÷ ${reference}), run 1 / run 2`,
          `at ${halfRate}/s, run 1 / run 2`,
          `p50, p99 at ${first.args['fixed-rate']}/s (ms), run 1 / run 2`,
          `p50, p99 at ${halfRate}/s (ms), run 1 / run 2`,
        ],
        rows,
      ),
      `${BATCHING.map((path) => link(path)).join(', ')}: ${day(first.date)}, ${quietHost(first.machine, loads, 'at the ends of the steps')}, steps of ${first.args.step}, every variant as shipped with Prometheus, revisions in the first column, tracing ${first.run.tracing}; run 2 ran the variants in the opposite order.`,
    ].join('\n\n');
  },
);

const WRITE_LINGER = [
  resultsFile('system.write-linger.run-1.json'),
  resultsFile('system.write-linger.run-2.json'),
] as const;

/**
 * What a linger on the orders' group commit buys at low rates: each variant's CPU per order, the
 * orders API's and PostgreSQL's share of it, and the POST's answer time, at the fixed rate on the
 * fresh stack, at half the given capacity and at the fixed rate again at the end; two runs, the
 * variants in opposite orders.
 */
export const writeLinger: FigureTable = {
  sources: [...WRITE_LINGER],
  render({ read, link }) {
    const runs = WRITE_LINGER.map((path) => ({ path, results: read<Written<SystemResults<Report>>>(path) }));
    const [first] = runs;
    if (!first) throw new Error('no write-linger run');
    const fixed = first.results.args['fixed-rate'];
    const both = (name: string, pick: (report: Report) => string) =>
      runs.map(({ path, results }) => pick(variant(results, name, path))).join(' / ');
    const cpu = (step: Step | undefined, part = 'total') => num(step?.cpuMsPerOrder[part], 2);
    const rows = first.results.reports.map((report) => [
      `${report.variant}: ${settingsOf(first.results, report.variant, "that revision's defaults, no linger")}`,
      both(report.variant, (r) => cpu(r.atFixedRate)),
      both(report.variant, (r) => `${cpu(r.atFixedRate, 'orders')}, ${cpu(r.atFixedRate, 'postgres')}`),
      both(report.variant, (r) => num(r.atFixedRate?.answerP99Ms?.accepted)),
      both(report.variant, (r) => cpu(r.atHalfCapacity)),
      both(report.variant, (r) => cpu(r.atFixedRateAfterSearch)),
    ]);
    const loads = runs.flatMap(({ results }) =>
      results.reports.flatMap((r) =>
        [r.atFixedRate, r.atHalfCapacity, r.atFixedRateAfterSearch].map((s) => s?.loadavg[0] ?? Number.NaN),
      ),
    );
    const half = num(first.results.reports[0]?.atHalfCapacity?.offeredRate);
    return [
      markdownTable(
        [
          'variant: settings',
          `CPU ms per order at ${fixed}/s, run 1 / run 2`,
          `of it the orders API, PostgreSQL`,
          `POST answer p99 at ${fixed}/s (ms)`,
          `CPU ms per order at ${half}/s`,
          `at ${fixed}/s again, at the end`,
        ],
        rows,
      ),
      `${runs.map(({ path }) => link(path)).join(', ')}: ${day(first.results.date)}, ${quietHost(first.results.machine, loads, 'at the ends of the steps')}, steps of ${first.results.args.step}, revision \`${first.results.reports[0]?.revision}\`, every variant as shipped, tracing ${first.results.run.tracing}; run 2 ran the variants in the opposite order.`,
    ].join('\n\n');
  },
};

/** What one refusal on arrival costs the orders API, revision beside revision (bench/refusal-cost.ts). */
const refusalCostOf = (name: string, machine = 'nothing else running'): FigureTable => {
  const file = resultsFile(name);
  return ofFile<Written<RefusalCost>>(file, (results, link) => {
    const [first] = results.variants;
    const { run } = results;
    return [
      markdownTableOf(results.variants, {
        revision: (v) => `\`${v.revision}\``,
        "the API's CPU per refusal, µs (median)": (v) => num(v.apiCpuUsPerRefusal),
        [`÷ \`${first?.revision}\``]: (v) => num(v.apiCpuUsPerRefusal / (first?.apiCpuUsPerRefusal ?? 1), 2),
        'each round': (v) => v.rounds.map((m) => num(m.apiCpuUsPerRefusal)).join(', '),
        'the load generator, µs per request': (v) => num(v.loadGeneratorCpuUsPerRequest),
        'answer p99, ms': (v) => num(v.answerP99Ms, 1),
      }),
      `${link(file)}: ${day(run.startedAt)}, ${run.cpuModel} ${run.cpus} vCPU, ${machine} (load average ${num(results.loadAverage.before[0], 1)} before, ${num(results.loadAverage.after[0], 1)} after), ${results.variants[0]?.rounds.length} rounds of ${num(results.variants[0]?.rounds[0]?.refused)} refusals each per revision, the revisions in turn; tracing: ${run.tracing}.`,
    ].join('\n\n');
  });
};

export const refusalCost = refusalCostOf('refusal-cost.json');
/** The same bench again, at a clean revision on an Intel host. */
export const refusalCostIntel = refusalCostOf(
  'refusal-cost.intel.json',
  'nothing else running but a rendering of the docs during the second round',
);
