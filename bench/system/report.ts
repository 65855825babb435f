/** The Markdown of bench:system's results file. */
import { markdownTableLinesOf } from '@outbox/devstack/table';
import type { Step, VariantReport } from './records.ts';
import { targetsTable } from './targets.ts';

/** `meta.args`: the run's flags; `stepMs`: its --step in milliseconds. */
export function markdown(
  reports: VariantReport[],
  meta: { args: { step: string; 'fixed-rate': string; env?: string[]; reference?: string } } & Record<
    string,
    unknown
  >,
  stepMs: number,
): string {
  const fixedRate = meta.args['fixed-rate'];
  const lines = [
    '# bench:system — the whole saga',
    '',
    `Run ${meta.date}; ${JSON.stringify(meta.machine)}; ${meta.postgres}; steps of ${meta.args.step}` +
      (stepMs < 60_000 ? ' (shorter than the 60 s the definition asks: a quick run)' : '') +
      (meta.args.env?.length ? `; extra environment \`${meta.args.env.join(' ')}\`` : '') +
      '; load average at the end of each step is in system.json.',
    '',
    'Sustained = the API accepted ≥ 95% of the rate, end-to-end p99 ≤ 1 s (order created → decided, orders database), no more than 1 s of orders pending when the load stopped, and everything settled.',
    '',
    ...summaryTable(reports, fixedRate),
    ...capacityRatios(reports),
  ];
  if (meta.args.reference)
    lines.push(
      '',
      `Targets against \`${meta.args.reference}\`, measured in this run:`,
      '',
      ...targetsTable(reports, meta.args.reference),
    );
  for (const r of reports) lines.push(...variantSection(r, fixedRate));
  lines.push(
    '',
    "PostgreSQL: the backends serving the stack's three databases (its WAL writer and checkpointer are shared with the rest of the server and not counted).",
    '',
  );
  return lines.join('\n');
}

/** One row per variant: its capacity, latency at 50% and 90% of it and at the fixed rate, CPU per order. */
function summaryTable(reports: VariantReport[], fixedRate: string): string[] {
  const lat = (s?: Step) => (s ? `${s.latencyMs.p50} / ${s.latencyMs.p95} / ${s.latencyMs.p99} ms` : '—');
  return markdownTableLinesOf(reports, {
    variant: (r) => r.variant,
    revision: (r) => r.revision,
    'capacity (orders/s)': (r) => `${r.capacity ?? '—'}${r.capacityGiven ? ' (given)' : ''}`,
    'p50 / p95 / p99 at 50%': (r) => lat(r.atHalfCapacity),
    'p50 / p95 / p99 at 90%': (r) => lat(r.atNinetyPercent),
    [`p50 / p99 at ${fixedRate}/s`]: (r) =>
      r.atFixedRate ? `${r.atFixedRate.latencyMs.p50} / ${r.atFixedRate.latencyMs.p99} ms` : '—',
    'CPU ms/order at capacity': (r) =>
      r.steps.find((s) => s.offeredRate === r.capacity)?.cpuMsPerOrder.total ?? '—',
    [`CPU ms/order at ${fixedRate}/s`]: (r) => r.atFixedRate?.cpuMsPerOrder.total ?? '—',
    [`CPU ms/order at ${fixedRate}/s after the search`]: (r) =>
      r.atFixedRateAfterSearch?.cpuMsPerOrder.total ?? '—',
  });
}

/** The capacity ratios between the variants the run has: current ÷ baseline, shipped and cdc ÷ current. */
function capacityRatios(reports: VariantReport[]): string[] {
  const capacity = (variant: string) => reports.find((r) => r.variant === variant)?.capacity;
  const current = capacity('current');
  return (
    [
      ['baseline', (x: string) => `Capacity ratio current ÷ baseline: ${x}`, true],
      ['shipped', (x: string) => `Tracing's cost: capacity shipped ÷ current (tracing off) ${x}`, false],
      ['cdc', (x: string) => `Capacity ratio cdc ÷ current (polling): ${x}`, false],
    ] as const
  ).flatMap(([variant, line, inverse]) => {
    const other = capacity(variant);
    if (!other || !current) return [];
    return ['', `**${line(`${(inverse ? current / other : other / current).toFixed(2)}×`)}**`];
  });
}

/** A variant's every step, what it kept below and above capacity, and its processes at capacity. */
function variantSection(r: VariantReport, fixedRate: string): string[] {
  const atCapacity = r.steps.find((s) => s.offeredRate === r.capacity);
  const lines = ['', `## ${r.variant} (${r.revision}): every step`, ''];
  lines.push(
    ...markdownTableLinesOf(
      [
        ...r.steps,
        ...(r.atHalfCapacity ? [r.atHalfCapacity] : []),
        ...(r.atNinetyPercent ? [r.atNinetyPercent] : []),
        ...(r.atFixedRate ? [r.atFixedRate] : []),
        ...(r.atFixedRateAfterSearch ? [r.atFixedRateAfterSearch] : []),
      ],
      {
        'offered/s': (s) => s.offeredRate,
        'accepted/s': (s) => s.achievedRate.toFixed(1),
        p50: (s) => `${s.latencyMs.p50} ms`,
        p95: (s) => `${s.latencyMs.p95} ms`,
        p99: (s) => `${s.latencyMs.p99} ms`,
        'pending at end': (s) => s.pendingAtEnd,
        verdict: (s) => (s.sustained ? 'sustained' : s.reasons.join('; ')),
        'CPU ms/order': (s) => s.cpuMsPerOrder.total,
        'WAL KiB/order, checkpoints': (s) =>
          s.walKiBPerOrder === undefined ? '—' : `${s.walKiBPerOrder}, ${s.checkpoints}`,
      },
    ),
  );
  if (r.underload?.length && r.capacity)
    lines.push(
      '',
      `Offered below capacity (${r.capacity}/s), each order sent once:`,
      '',
      ...offeredTable(r.underload, r.capacity),
    );
  if (r.overload?.length && r.capacity)
    lines.push(
      '',
      `Offered above capacity (${r.capacity}/s), each order sent once:`,
      '',
      ...offeredTable(r.overload, r.capacity),
    );
  if (atCapacity) {
    lines.push('', `At capacity (${r.capacity}/s), per process:`, '');
    const names = Object.keys(atCapacity.cpuMsPerOrder).filter((n) => n !== 'total');
    lines.push(
      ...markdownTableLinesOf(names, {
        process: (n) => n,
        'CPU ms/order': (n) => atCapacity.cpuMsPerOrder[n],
        'RSS MiB': (n) => atCapacity.rssMiB[n] ?? '—',
        [`CPU ms/order at ${fixedRate}/s`]: (n) => r.atFixedRate?.cpuMsPerOrder[n] ?? '—',
      }),
    );
  }
  return lines;
}

/** Steps at a share of the capacity: what was accepted and shed, how fast, by whose clock. */
function offeredTable(steps: Step[], capacity: number): string[] {
  return markdownTableLinesOf(steps, {
    'offered/s': (s) => s.offeredRate,
    'accepted/s': (s) => s.achievedRate.toFixed(1),
    'goodput ÷ capacity': (s) => (s.achievedRate / capacity).toFixed(2),
    'shed (by reason)': (s) =>
      s.refusals
        ? `${s.shed ?? '—'} (${
            Object.entries(s.refusals.byReason)
              .filter(([, n]) => n > 0)
              .map(([reason, n]) => `${reason} ${n}`)
              .join(', ') || 'none'
          })`
        : String(s.shed ?? '—'),
    'other refusals': (s) => s.rejected ?? '—',
    'e2e p99 of accepted': (s) => `${s.latencyMs.p99} ms`,
    'answer p99: accepted / shed (client)': (s) =>
      s.answerP99Ms ? `${Math.round(s.answerP99Ms.accepted)} / ${Math.round(s.answerP99Ms.shed)} ms` : '—',
    'refused within 50 ms of arrival (API clock)': (s) =>
      s.refusals && s.refusals.shed > 0
        ? `${(100 * s.refusals.within50ms).toFixed(1)}% (p99 ≤ ${s.refusals.p99AtMostMs} ms)`
        : '—',
  });
}
