import { markdownTableOf } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { Step as BenchStep, MeasuredReport, SystemResults } from '../../bench/system/records.ts';
import { num } from './format.ts';
import { variant } from './system.ts';
import type { FigureTable } from './types.ts';

/** The admission runs came after bench:system counted what it shed: every step of theirs has `shed`. */
type Step = BenchStep & { shed: number };
type Report = Omit<MeasuredReport, 'underload' | 'overload'> & { underload?: Step[]; overload?: Step[] };

/** The admission runs on a machine to itself, and what each variant was. */
const RUNS: { path: string; label: string; variants: Record<string, string> }[] = [
  {
    path: resultsFile('system.quiet.json'),
    label: 'capacity searched',
    variants: { current: 'adaptive, tracing off', shipped: 'adaptive, as shipped' },
  },
  {
    path: resultsFile('system.admission.quiet.json'),
    label: 'capacity given: 200/s',
    variants: {
      'fixed-limit': 'fixed, tracing off',
      current: 'adaptive, tracing off',
      'shipped-fixed': 'fixed, as shipped',
      shipped: 'adaptive, as shipped',
    },
  },
  {
    path: resultsFile('system.admission.quiet-2.json'),
    label: 'capacity given: 200/s, the variants in the other order',
    variants: {
      shipped: 'adaptive, as shipped',
      'shipped-fixed': 'fixed, as shipped',
      current: 'adaptive, tracing off',
      'fixed-limit': 'fixed, tracing off',
    },
  },
  {
    path: resultsFile('system.admission.backlog-bound.json'),
    label: 'capacity given: 200/s',
    variants: {
      current: 'adaptive, backlog bound 1 s (default)',
      'backlog-3s': 'adaptive, backlog bound 3 s',
      'no-backlog-bound': 'adaptive, no backlog bound',
    },
  },
];

const shedCell = (step: Step | undefined) => {
  if (!step) return '—';
  const reasons = Object.entries(step.refusals?.byReason ?? {})
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${num(n)}`)
    .join(', ');
  return reasons ? `${num(step.shed)} (${reasons})` : num(step.shed);
};

const within50 = (steps: (Step | undefined)[]) =>
  steps
    .map((step) =>
      !step?.shed || step.refusals?.within50ms == null ? '—' : `${num(step.refusals.within50ms * 100, 1)}%`,
    )
    .join(' / ');

/** Fixed against adaptive admission at 0.8× and 2× the capacity, by run (bench:system --variant-env). */
export const admission: FigureTable = {
  sources: RUNS.map((run) => run.path),
  render({ read, link }) {
    const rows = RUNS.flatMap(({ path, label, variants }) => {
      const results = read<SystemResults<Report>>(path);
      return Object.entries(variants).map(([name, description]) => {
        const report = variant(results, name, path);
        const run = `${description} (\`${report.revision}\`, ${label}, ${link(path)})`;
        return {
          run,
          capacity: report.capacity,
          under: report.underload?.[0],
          over: report.overload?.at(-1),
        };
      });
    });
    return markdownTableOf(rows, {
      'limit, run': ({ run }) => run,
      'at 0.8×: offered → accepted/s': ({ under }) =>
        under ? `${num(under.offeredRate)} → ${num(under.achievedRate, 1)}` : '—',
      'shed at 0.8× (by reason)': ({ under }) => shedCell(under),
      'at 2×: offered → accepted/s (÷ capacity)': ({ over, capacity }) =>
        over
          ? `${num(over.offeredRate)} → ${num(over.achievedRate, 1)} (${num(over.achievedRate / capacity, 2)})`
          : '—',
      'shed at 2×': ({ over }) => shedCell(over),
      'e2e p99 of the accepted at 2×': ({ over }) => (over ? `${num(over.latencyMs.p99)} ms` : '—'),
      'refusals answered within 50 ms (API clock), 0.8× / 2×': ({ under, over }) => within50([under, over]),
      'load average at the end, 0.8× / 2×': ({ under, over }) =>
        [under, over].map((step) => (step ? num(step.loadavg[0], 1) : '—')).join(' / '),
    });
  },
};
