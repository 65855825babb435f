/**
 * The performance targets, as ratios against a reference variant measured in the same run
 * (`--reference shipped@400e20f`): what docs/performance.md holds the system to.
 */
import { markdownTableLines } from '@outbox/devstack/table';
import type { Step, VariantReport } from './records.ts';

/** Each target: what is compared, its bound, and whether a lower or a higher value meets it. */
export const TARGETS = {
  peakRatio: { bound: 2, better: 'higher', what: 'peak accepted orders/s ÷ the reference’s' },
  cpuRatio: { bound: 0.5, better: 'lower', what: 'CPU ms per order at the fixed rate ÷ the reference’s' },
  p99AtHalfMs: { bound: 500, better: 'lower', what: 'end-to-end p99 at half of capacity (ms)' },
  goodputAtTwice: { bound: 0.9, better: 'higher', what: 'goodput offered 2× capacity ÷ the peak' },
  refusedBelow80: { bound: 0, better: 'lower', what: 'orders refused offered below 80% of capacity' },
} as const;
export type TargetName = keyof typeof TARGETS;

/** The most orders per second the API accepted in any step: the peak, sustained or not. */
export function peakAccepted(report: VariantReport): number | undefined {
  const steps = [...report.steps, ...(report.underload ?? []), ...(report.overload ?? [])];
  return steps.length ? Math.max(...steps.map((s) => s.achievedRate)) : undefined;
}

/** Each target's value for `report` against `reference` (undefined where a step is missing). */
export function targetValues(
  report: VariantReport,
  reference: VariantReport,
): Record<TargetName, number | undefined> {
  const ratio = (a?: number, b?: number) => (a !== undefined && b ? a / b : undefined);
  const peak = peakAccepted(report);
  const capacity = report.capacity;
  const atTwice = capacity
    ? report.overload?.find((s) => Math.abs(s.offeredRate - 2 * capacity) <= 1)
    : undefined;
  const below80 = capacity
    ? [...(report.underload ?? []), ...(report.atFixedRate ? [report.atFixedRate] : [])].filter(
        (s) => s.offeredRate <= 0.8 * capacity,
      )
    : [];
  const refused = (s: Step) => (s.shed ?? 0) + (s.rejected ?? 0);
  return {
    peakRatio: ratio(peak, peakAccepted(reference)),
    cpuRatio: ratio(report.atFixedRate?.cpuMsPerOrder.total, reference.atFixedRate?.cpuMsPerOrder.total),
    p99AtHalfMs: report.atHalfCapacity?.latencyMs.p99,
    goodputAtTwice: ratio(atTwice?.achievedRate, peak),
    refusedBelow80: below80.length ? below80.reduce((sum, s) => sum + refused(s), 0) : undefined,
  };
}

/** Whether a value meets its target. */
export function meets(name: TargetName, value: number): boolean {
  const { bound, better } = TARGETS[name];
  return better === 'higher' ? value >= bound : value <= bound;
}

/** The Markdown table: one row per target, one column per variant other than the reference. */
export function targetsTable(reports: VariantReport[], referenceName: string): string[] {
  const reference = reports.find((r) => r.variant === referenceName);
  if (!reference) return [];
  const others = reports.filter((r) => r !== reference);
  const values = others.map((r) => targetValues(r, reference));
  const own = targetValues(reference, reference);
  const show = (name: TargetName, value: number | undefined) =>
    value === undefined
      ? '—'
      : `${Number.isInteger(value) ? value : value.toFixed(2)}${meets(name, value) ? ' (met)' : ' (not met)'}`;
  return markdownTableLines(
    ['target', 'bound', `${referenceName} itself`, ...others.map((r) => `${r.variant} (${r.revision})`)],
    (Object.keys(TARGETS) as TargetName[]).map((name) => [
      TARGETS[name].what,
      `${TARGETS[name].better === 'higher' ? '≥' : '≤'} ${TARGETS[name].bound}`,
      name === 'peakRatio' || name === 'cpuRatio' ? '1' : show(name, own[name]),
      ...values.map((v) => show(name, v[name])),
    ]),
  );
}
