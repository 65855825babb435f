import { markdownTableOf } from '@outbox/devstack/table';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { Step, SystemResults } from '../../bench/system/records.ts';
import type { WhereTimeGoes as Report } from '../../bench/where-time-goes.ts';
import { day, loadsOf, num, percent, quietHost, range } from './format.ts';
import { type FigureTable, ofFile } from './types.ts';

type WhereTimeGoes = Written<Report>;

type Variant = { name: string; label: string };

/**
 * where-time-goes run twice per variant, interleaved, offered more than the host takes: what each
 * accepted, and what each order cost. Files `where-time-goes.<prefix>.<variant>.run-<n>.json`; a
 * variant's revision is named in its row when the variants ran different revisions.
 */
function overloadedVariants(prefix: string, variants: Variant[]): FigureTable {
  const runs = [1, 2];
  const fileOf = (variant: string, run: number) =>
    resultsFile(`where-time-goes.${prefix}.${variant}.run-${run}.json`);
  const files = variants.flatMap(({ name }) => runs.map((run) => fileOf(name, run)));
  return {
    sources: files,
    render({ read, link }) {
      const runsOf = (variant: string) => runs.map((run) => read<WhereTimeGoes>(fileOf(variant, run)));
      const spread = (variant: string, figure: (r: WhereTimeGoes) => number, digits = 0) =>
        range(runsOf(variant).map(figure), digits);
      const first = read<WhereTimeGoes>(fileOf(variants[0]?.name ?? '', 1));
      const all = files.map((file) => read<WhereTimeGoes>(file));
      const revisions = new Set(all.map((r) => r.run.revision));
      const revisionOf = (v: Variant) => runsOf(v.name)[0]?.run.revision;
      const loads = loadsOf(all);
      return [
        markdownTableOf(variants, {
          'orders written': (v) => (revisions.size > 1 ? `${v.label} (\`${revisionOf(v)}\`)` : v.label),
          [`accepted of ${num(first.rate * first.seconds)} offered in ${num(first.seconds)} s`]: (v) =>
            spread(v.name, (r) => r.accepted),
          'CPU ms per order, all': (v) => spread(v.name, (r) => r.cpuMsPerOrder.total ?? Number.NaN, 2),
          'orders API': (v) => spread(v.name, (r) => r.cpuMsPerOrder.orders ?? Number.NaN, 2),
          PostgreSQL: (v) => spread(v.name, (r) => r.cpuMsPerOrder.postgres ?? Number.NaN, 2),
          'transactions per order, orders database': (v) =>
            spread(v.name, (r) => r.transactionsPerOrder.orders ?? Number.NaN, 2),
          'end-to-end p99': (v) => `${spread(v.name, (r) => r.latencyMs.p99)} ms`,
        }),
        '',
        `${runs.length} runs of each, interleaved (${files.map(link).join(', ')}): ${day(first.date)}, ` +
          (revisions.size > 1 ? 'revisions in the first column' : `revision \`${first.run.revision}\``) +
          `, ${quietHost(first.machine, loads, 'before and after')}, ` +
          `${num(first.rate)} orders/s offered for ${num(first.seconds)} s after ${num(first.warmup.seconds)} s at ` +
          `${num(first.warmup.rate)}/s, tracing ${first.run.tracing}, pg_stat_statements loaded.`,
      ].join('\n');
    },
  };
}

/** The orders API's writes alone, grouped (the default), and grouped over four writing transactions. */
export const groupCommit = overloadedVariants('group-commit', [
  { name: 'alone', label: 'each order in its own transaction (`ORDER_WRITE_BATCH_MAX=1`)' },
  { name: 'default', label: 'grouped, two writing transactions (the default)' },
  { name: 'concurrency-4', label: 'grouped, four writing transactions (`ORDER_WRITE_CONCURRENCY=4`)' },
]);

/** A batch written order by order, each with its statement, against all of it by one statement. */
export const oneStatementPerBatch = overloadedVariants('batch-statement', [
  { name: 'per-order', label: 'grouped, one statement per order' },
  { name: 'per-batch', label: 'grouped, one statement per batch, the default' },
]);

const TARGETS_RUN_5 = resultsFile('system.targets.run-5.json');

/**
 * "24% … against 11% at capacity": the machine's busy share that none of the stack's processes
 * used, with twice the capacity offered and at capacity, in the grouped variant of the run.
 */
export const outsideTheStackRun5 = ofFile<Written<SystemResults>>(TARGETS_RUN_5, (results) => {
  const shipped = results.reports.find((r) => r.variant === 'shipped');
  const twice = shipped?.overload?.at(-1);
  const capacity = shipped?.steps.find((s) => s.offeredRate === shipped.capacity);
  const outside = (step: Step | undefined) =>
    step
      ? step.machineBusy - (step.cpuSeconds.total ?? 0) / (results.machine.cpus * step.seconds)
      : Number.NaN;
  return (
    `${percent(outside(twice))} of the machine's ${num(results.machine.cpus)} cores, offered ${num(twice?.offeredRate)} orders/s, ` +
    `against ${percent(outside(capacity))} at capacity`
  );
});

const OVERLOAD = resultsFile('where-time-goes.overload-400.9ca94df.json');

/** Offered twice what the host takes, grouped: what went through, the machine, the orders process's parts. */
export const overloadGrouped = ofFile<WhereTimeGoes>(OVERLOAD, (r, link) => {
  const profile = r.profiles.orders;
  const share = (part: string) =>
    percent((profile?.parts.find((p) => p.part.startsWith(part))?.ms ?? Number.NaN) / (profile?.busyMs ?? 1));
  return (
    `${num(r.accepted)} accepted and ${num(r.shed ?? 0)} refused of ${num(r.rate * r.seconds)} offered in ` +
    `${num(r.seconds)} s (the load generator holds at most 256 requests in flight and waits for a free place, so the rest were not sent before the time ran out); ` +
    `the machine ${percent(r.loadWindow?.machineBusy ?? Number.NaN)} busy, the load generator ` +
    `${num(r.loadWindow?.loadGeneratorMsPerOrder, 1)} ms of CPU per accepted order, the stack ` +
    `${num(r.cpuMsPerOrder.total, 1)} ms, the orders process ${num(r.cpuMsPerOrder.orders, 2)} ms of it, ` +
    `Prisma ${share('Prisma')} and HTTP ${share('HTTP')} of its busy samples (${link(OVERLOAD)}, revision ` +
    `\`${r.run.revision}\`, ${day(r.date)}, tracing ${r.run.tracing})`
  );
});
