import { markdownTableOf } from '@outbox/devstack/table';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { Step, SystemResults } from '../../bench/system/records.ts';
import type { WhereTimeGoes } from '../../bench/where-time-goes.ts';
import { day, loadsOf, num, quietHost } from './format.ts';
import { type FigureTable, ofFile } from './types.ts';

const RUN_19 = resultsFile('system.targets.run-19.json');

const perSecond = (step: Step, ...processes: string[]) =>
  num(processes.reduce((sum, name) => sum + (step.cpuSeconds[name] ?? 0), 0) * (1000 / step.seconds));

/**
 * What a second of the whole system costs at each rate its capacity search offered and it took,
 * by process: a cost that hardly moves with the rate is paid per second (per batch, per wake-up),
 * not per order.
 */
export const costOfASecond = ofFile<Written<SystemResults>>(RUN_19, (results, link) => {
  const rows = results.reports.flatMap((report) =>
    report.steps
      .filter((step) => step.sustained)
      .sort((a, b) => a.offeredRate - b.offeredRate)
      .map((step) => ({ report, step })),
  );
  const loads = rows.map(({ step }) => step.loadavg[0] ?? Number.NaN);
  return [
    markdownTableOf(rows, {
      code: ({ report }) => `${report.variant} (\`${report.revision}\`)`,
      'orders/s taken': ({ step }) => num(step.accepted / step.seconds),
      'CPU ms per second, all': ({ step }) => perSecond(step, 'total'),
      'orders API': ({ step }) => perSecond(step, 'orders'),
      'three relays': ({ step }) => perSecond(step, 'relay-orders', 'relay-inventory', 'relay-billing'),
      'inventory, billing': ({ step }) => perSecond(step, 'inventory', 'billing'),
      Kafka: ({ step }) => perSecond(step, 'kafka'),
      PostgreSQL: ({ step }) => perSecond(step, 'postgres'),
      Zipkin: ({ step }) => perSecond(step, 'zipkin'),
      'CPU ms per order': ({ step }) => num(step.cpuMsPerOrder.total, 2),
    }),
    `The sustained steps of the capacity search in ${link(RUN_19)}: ${day(results.date)}, ${quietHost(results.machine, loads, 'at the ends of these steps')}, steps of ${results.args.step}, both as shipped, tracing ${results.run.tracing}.`,
  ].join('\n\n');
});

const WHERE = (name: string) => resultsFile(`where-time-goes.intel.${name}.json`);
const LOW_RATES: [string, string][] = [
  ['rate-2', 'the defaults'],
  ['rate-25', 'the defaults'],
  ['rate-80.run-1', 'the defaults, run 1'],
  ['rate-80.run-2', 'the defaults, run 2'],
  ['linger-100.run-1', '`RELAY_LINGER_MS=100`, `KAFKA_CHUNK_LINGER_MS=100`, run 1'],
  ['linger-100.run-2', 'the same, run 2'],
];

/** The stack at a low rate, by rate, and at 80 orders/s with twice the waits at its hops. */
export const costByRateAndWait: FigureTable = {
  sources: LOW_RATES.map(([name]) => WHERE(name)),
  render({ read, link }) {
    const runs = LOW_RATES.map(([name, label]) => ({
      file: WHERE(name),
      label,
      r: read<Written<WhereTimeGoes>>(WHERE(name)),
    }));
    const loads = loadsOf(runs.map(({ r }) => r));
    const first = runs[0]?.r;
    return [
      markdownTableOf(runs, {
        'orders/s': ({ r }) => num(r.rate),
        settings: ({ label, file }) => `${label} (${link(file)})`,
        'CPU ms per order, all': ({ r }) => num(r.cpuMsPerOrder.total, 2),
        'CPU ms per second': ({ r }) => num((r.cpuMsPerOrder.total ?? 0) * r.rate),
        'end-to-end p50 / p99': ({ r }) => `${num(r.latencyMs.p50)} / ${num(r.latencyMs.p99)} ms`,
      }),
      `\`bench:where-time-goes --rate N --seconds 30 --tracing\`, one run each (at 80/s the defaults and the longer waits in turn, then 2 and 25/s): ${first ? day(first.date) : ''}, revision \`${first?.run.revision}\`, ${quietHost(first?.machine, loads, 'before and after')}; spans to an OTLP receiver inside the bench (not counted), so the totals are below bench:system's, which counts Zipkin.`,
    ].join('\n\n');
  },
};

const CONSUMER_WAIT = (when: 'before' | 'after', rate: number, run: number) =>
  resultsFile(`where-time-goes.consumer-wait.${when}.rate-${rate}.run-${run}.json`);
const WAIT_ROWS = [225, 80].flatMap((rate) =>
  (['before', 'after'] as const).map((when) => ({
    rate,
    when,
    files: [1, 2].map((run) => CONSUMER_WAIT(when, rate, run)),
  })),
);

/** The consumers' wait before their transaction (as it was) and after it, at two rates, twice each. */
export const consumerWait: FigureTable = {
  sources: WAIT_ROWS.flatMap((row) => row.files),
  render({ read, link }) {
    const rows = WAIT_ROWS.map((row) => ({
      ...row,
      runs: row.files.map((f) => read<Written<WhereTimeGoes>>(f)),
    }));
    const both = (runs: Written<WhereTimeGoes>[], figure: (r: Written<WhereTimeGoes>) => string) =>
      runs.map(figure).join(' / ');
    const all = rows.flatMap((row) => row.runs);
    const loads = loadsOf(all);
    const runOf = (when: string) => rows.find((row) => row.when === when)?.runs[0];
    const [before, after] = [runOf('before'), runOf('after')];
    return [
      markdownTableOf(rows, {
        'orders/s': (row) => num(row.rate),
        'the wait': (row) =>
          row.when === 'before' ? 'before the transaction (as it was)' : 'after the transaction',
        'CPU ms per order, run 1 / run 2': (row) => both(row.runs, (r) => num(r.cpuMsPerOrder.total, 2)),
        'end-to-end p50, ms': (row) => both(row.runs, (r) => num(r.latencyMs.p50)),
        'end-to-end p99, ms': (row) => both(row.runs, (r) => num(r.latencyMs.p99)),
      }),
      `${all.length} runs of \`bench:where-time-goes --rate N --seconds 30 --tracing\`, the two codes in turn at each rate (${rows.flatMap((row) => row.files.map(link)).join(', ')}): ${day(before?.date ?? '')}, the wait before the transaction at \`${before?.run.revision}\`, after it at \`${after?.run.revision}\` with the change uncommitted (committed unchanged as \`68f47ae\`), ${quietHost(before?.machine, loads, 'before and after')}, spans to an OTLP receiver inside the bench.`,
    ].join('\n\n');
  },
};

const AMD_WAIT = (wait: number, run: string) => resultsFile(`where-time-goes.amd.wait-${wait}.${run}.json`);
const WAITS = [50, 75, 100].map((wait) => ({
  wait,
  at80: ['rate-80.run-1', 'rate-80.run-2'].map((run) => AMD_WAIT(wait, run)),
  atHalf: AMD_WAIT(wait, 'rate-375'),
}));
const WAIT_FILES = WAITS.flatMap((row) => [...row.at80, row.atHalf]);

/** Both waits at 50, 75 and 100 ms: CPU per order at the fixed rate, latency there and at half of capacity. */
export const waitLength: FigureTable = {
  sources: WAIT_FILES,
  render({ read, link }) {
    const rows = WAITS.map((row) => ({
      ...row,
      runs80: row.at80.map((f) => read<Written<WhereTimeGoes>>(f)),
      half: read<Written<WhereTimeGoes>>(row.atHalf),
    }));
    const all = rows.flatMap((row) => [...row.runs80, row.half]);
    const loads = loadsOf(all);
    const latency = (r: Written<WhereTimeGoes>) => `${num(r.latencyMs.p50)} / ${num(r.latencyMs.p99)}`;
    const settings = (r: Written<WhereTimeGoes>) =>
      Object.entries(r.env ?? {})
        .map(([key, value]) => `\`${key}=${value}\``)
        .join(', ');
    const warmup = (r: Written<WhereTimeGoes> | undefined) =>
      `${num(r?.warmup.rate)} orders/s for ${num(r?.warmup.seconds)} s`;
    const [fixed, half] = [rows[0]?.runs80[0], rows[0]?.half];
    const halfRate = num(half?.rate);
    return [
      markdownTableOf(rows, {
        'both waits': (row) => `${row.wait} ms (${settings(row.half)})`,
        'CPU ms per order at 80/s, run 1 / run 2': (row) =>
          row.runs80.map((r) => num(r.cpuMsPerOrder.total, 2)).join(' / '),
        'end-to-end p50 / p99 at 80/s (ms), run 1; run 2': (row) => row.runs80.map(latency).join('; '),
        [`CPU ms per order at ${halfRate}/s`]: (row) => num(row.half.cpuMsPerOrder.total, 2),
        [`end-to-end p50 / p99 at ${halfRate}/s (ms)`]: (row) => latency(row.half),
      }),
      `${all.length} runs of \`bench:where-time-goes --rate N --seconds ${num(fixed?.seconds)} --tracing\` (${WAIT_FILES.map(link).join(', ')}): ${day(fixed?.date ?? '')}, revision \`${fixed?.run.revision}\`, ${quietHost(fixed?.machine, loads, 'before and after')}, spans to an OTLP receiver inside the bench; at 80/s after a warm-up of ${warmup(fixed)}, at ${halfRate}/s (about half of this host's capacity) after ${warmup(half)}.`,
    ].join('\n\n');
  },
};
