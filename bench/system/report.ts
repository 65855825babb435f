/** What bench:system records per variant and step, and the Markdown of its results file. */
import { table } from '../support/environment.ts';

/** baseline: an earlier revision; current: this checkout; cdc: this checkout, every outbox through Debezium. */
export type Variant = 'baseline' | 'current' | 'cdc';

export type Step = {
  offeredRate: number;
  achievedRate: number;
  accepted: number;
  seconds: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  pendingAtEnd: number;
  settled: boolean;
  sustained: boolean;
  reasons: string[];
  /** CPU ms per accepted order, per process (and the Kafka JVM, and PostgreSQL backends). */
  cpuMsPerOrder: Record<string, number>;
  /** CPU seconds over the load, per process (or kind of process), and their total. */
  cpuSeconds: Record<string, number>;
  /** Resident memory at the end of the load, MiB (summed over a kind's processes). */
  rssMiB: Record<string, number>;
  /** Busy share of all the machine's cores over the load, 0..1 (every process, ours or not). */
  machineBusy: number;
  /** The machine's 1, 5 and 15-minute load averages at the end of the load. */
  loadavg: number[];
};
export type VariantReport = {
  variant: Variant;
  checkout: string;
  revision: string;
  capacity?: number;
  steps: Step[];
  atHalfCapacity?: Step;
  atNinetyPercent?: Step;
  atFixedRate?: Step;
};
/** `meta.args`: the run's flags; `stepMs`: its --step in milliseconds. */
export function markdown(
  reports: VariantReport[],
  meta: { args: { step: string; 'fixed-rate': string } } & Record<string, unknown>,
  stepMs: number,
): string {
  const lines = [
    '# bench:system — the whole saga',
    '',
    `Run ${meta.date}; ${JSON.stringify(meta.machine)}; ${meta.postgres}; steps of ${meta.args.step}` +
      (stepMs < 60_000 ? ' (shorter than the 60 s the definition asks: a quick run)' : '') +
      '; load average at the end of each step is in system.json.',
    '',
    'Sustained = the API accepted ≥ 95% of the rate, end-to-end p99 ≤ 1 s (order created → decided, orders database), no more than 1 s of orders pending when the load stopped, and everything settled.',
    '',
    ...table(
      [
        'variant',
        'revision',
        'capacity (orders/s)',
        'p50 / p95 / p99 at 50%',
        'p50 / p95 / p99 at 90%',
        `p50 / p99 at ${meta.args['fixed-rate']}/s`,
        'CPU ms/order at capacity',
      ],
      reports.map((r) => {
        const atCapacity = r.steps.find((s) => s.offeredRate === r.capacity);
        const lat = (s?: Step) =>
          s ? `${s.latencyMs.p50} / ${s.latencyMs.p95} / ${s.latencyMs.p99} ms` : '—';
        return [
          r.variant,
          r.revision,
          String(r.capacity ?? '—'),
          lat(r.atHalfCapacity),
          lat(r.atNinetyPercent),
          r.atFixedRate ? `${r.atFixedRate.latencyMs.p50} / ${r.atFixedRate.latencyMs.p99} ms` : '—',
          String(atCapacity?.cpuMsPerOrder.total ?? '—'),
        ];
      }),
    ),
  ];
  const [baseline, current] = [
    reports.find((r) => r.variant === 'baseline'),
    reports.find((r) => r.variant === 'current'),
  ];
  if (baseline?.capacity && current?.capacity)
    lines.push(
      '',
      `**Capacity ratio current ÷ baseline: ${(current.capacity / baseline.capacity).toFixed(2)}×**`,
    );
  const cdc = reports.find((r) => r.variant === 'cdc');
  if (cdc?.capacity && current?.capacity)
    lines.push(
      '',
      `**Capacity ratio cdc ÷ current (polling): ${(cdc.capacity / current.capacity).toFixed(2)}×**`,
    );
  for (const r of reports) {
    const atCapacity = r.steps.find((s) => s.offeredRate === r.capacity);
    lines.push('', `## ${r.variant} (${r.revision}): every step`, '');
    lines.push(
      ...table(
        ['offered/s', 'accepted/s', 'p50', 'p95', 'p99', 'pending at end', 'verdict', 'CPU ms/order'],
        [
          ...r.steps,
          ...(r.atHalfCapacity ? [r.atHalfCapacity] : []),
          ...(r.atNinetyPercent ? [r.atNinetyPercent] : []),
          ...(r.atFixedRate ? [r.atFixedRate] : []),
        ].map((s) => [
          String(s.offeredRate),
          s.achievedRate.toFixed(1),
          `${s.latencyMs.p50} ms`,
          `${s.latencyMs.p95} ms`,
          `${s.latencyMs.p99} ms`,
          String(s.pendingAtEnd),
          s.sustained ? 'sustained' : s.reasons.join('; '),
          String(s.cpuMsPerOrder.total),
        ]),
      ),
    );
    if (atCapacity) {
      lines.push('', `At capacity (${r.capacity}/s), per process:`, '');
      const names = Object.keys(atCapacity.cpuMsPerOrder).filter((n) => n !== 'total');
      lines.push(
        ...table(
          ['process', 'CPU ms/order', 'RSS MiB'],
          names.map((n) => [n, String(atCapacity.cpuMsPerOrder[n]), String(atCapacity.rssMiB[n] ?? '—')]),
        ),
      );
    }
  }
  lines.push(
    '',
    "PostgreSQL: the backends serving the stack's three databases (its WAL writer and checkpointer are shared with the rest of the server and not counted).",
    '',
  );
  return lines.join('\n');
}
