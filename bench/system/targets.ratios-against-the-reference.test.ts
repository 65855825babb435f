import { describe, expect, it } from 'vitest';
import type { Step, VariantReport } from './records.ts';
import { meets, targetsTable, targetValues } from './targets.ts';

const step = (offeredRate: number, overrides: Partial<Step> = {}): Step => ({
  offeredRate,
  achievedRate: offeredRate,
  accepted: offeredRate * 20,
  shed: 0,
  rejected: 0,
  seconds: 20,
  latencyMs: { p50: 100, p95: 200, p99: 300, max: 400 },
  pendingAtEnd: 0,
  settled: true,
  sustained: true,
  reasons: [],
  cpuMsPerOrder: { total: 40 },
  cpuSeconds: {},
  rssMiB: {},
  machineBusy: 0.5,
  loadavg: [1, 1, 1],
  ...overrides,
});

const report = (variant: string, capacity: number, cpu: number, overrides: Partial<VariantReport> = {}) =>
  ({
    variant,
    checkout: '.',
    revision: variant,
    capacity,
    steps: [step(capacity / 2), step(capacity), step(capacity * 1.5, { sustained: false })],
    atHalfCapacity: step(capacity / 2),
    underload: [step(capacity / 2)],
    overload: [step(capacity * 2, { achievedRate: capacity * 0.95 })],
    atFixedRate: step(30, { cpuMsPerOrder: { total: cpu } }),
    ...overrides,
  }) satisfies VariantReport;

describe('the targets against a reference variant', () => {
  it('takes the peak from every step and the CPU at the fixed rate as ratios', () => {
    const values = targetValues(report('new', 80, 20), report('old', 40, 50));
    expect(values.peakRatio).toBe(2); // peaks 120 vs 60 (1.5× capacity steps)
    expect(values.cpuRatio).toBeCloseTo(0.4);
    expect(values.p99AtHalfMs).toBe(300);
    expect(values.goodputAtTwice).toBeCloseTo((80 * 0.95) / 120);
    expect(values.refusedBelow80).toBe(0);
  });

  it('counts refusals only in the steps offered at most 80% of capacity', () => {
    const refusing = report('new', 100, 20, {
      underload: [step(50, { shed: 3 }), step(90, { shed: 40 })],
      atFixedRate: step(30, { rejected: 2, cpuMsPerOrder: { total: 20 } }),
    });
    expect(targetValues(refusing, report('old', 40, 50)).refusedBelow80).toBe(5);
  });

  it('says which targets are missed', () => {
    expect(meets('peakRatio', 1.9)).toBe(false);
    expect(meets('cpuRatio', 0.6)).toBe(false);
    expect(meets('goodputAtTwice', 0.9)).toBe(true);
    const lines = targetsTable([report('old', 40, 50), report('new', 50, 45)], 'old').join('\n');
    expect(lines).toMatch(/peak accepted .*\| 1\.25 \(not met\) \|/);
    expect(lines).toMatch(/CPU ms per order .*\| 0\.90 \(not met\) \|/);
  });
});
