// What the outbox prevents, shown by the checker: the orders service writes with each naive dual
// write in turn (commit-then-publish, publish-then-commit) and then with the outbox, on the same
// system, under the same load and the same faults (the broker killed, a transaction failing right
// before COMMIT, orders killed between its two writes). The naive ones must be caught — lost events
// for the first, ghost events for the second — and the outbox must show none. The three runs make
// one report, its table first (test-results/chaos/dual-writes.md; bench/results/chaos/chaos.dual-writes.md keeps one run).
import { join } from 'node:path';
import { formatDualWriteTable, type ScenarioReport, writeReports } from '@outbox/chaos';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { afterAll, describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

const reports: ScenarioReport[] = [];
const figure = (report: ScenarioReport, name: string) => count(report, 'no-lost-or-ghost-orders', name);
const violationsOf = (report: ScenarioReport) =>
  report.invariants.find((result) => result.name === 'no-lost-or-ghost-orders')?.violations.join('\n') ?? '';

describe('chaos: naive dual writes next to the outbox, same load, same faults', () => {
  afterAll(() => {
    // The three runs in one report, the side-by-side table first, as `npm run chaos -- dual-writes` writes it.
    const results = join(import.meta.dirname, '../../test-results/chaos');
    writeReports(reports, {
      json: join(results, 'dual-writes.json'),
      markdown: join(results, 'dual-writes.md'),
    });
    console.log(formatDualWriteTable(reports));
  });

  it('commit-then-publish loses events: committed orders whose ORDER_CREATED never went out stay PENDING', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('dual-write-commit-then-publish');
    reports.push(report);
    expect(report.error).toBeUndefined();
    expect(report.writeMode).toBe('commit-then-publish');
    expect(report.passed).toBe(false);
    expect(figure(report, 'lost')).toBeGreaterThan(0);
    expect(figure(report, 'ghost')).toBe(0);
    // Nobody ever hears of a lost order, so nothing moves it on.
    expect(figure(report, 'stuckPending')).toBeGreaterThanOrEqual(figure(report, 'lost'));
    expect(violationsOf(report)).toMatch(
      /lost: committed order whose ORDER_CREATED is not on the topic: \d+ \(e\.g\. [0-9a-f-]{36}/,
    );
  });

  it('publish-then-commit invents events: inventory and billing act on orders that never committed', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('dual-write-publish-then-commit');
    reports.push(report);
    expect(report.error).toBeUndefined();
    expect(report.writeMode).toBe('publish-then-commit');
    expect(report.passed).toBe(false);
    expect(figure(report, 'ghost')).toBeGreaterThan(0);
    expect(figure(report, 'ghostReservations') + figure(report, 'ghostPayments')).toBeGreaterThan(0);
    expect(figure(report, 'lost')).toBe(0);
    expect(violationsOf(report)).toMatch(
      /ghost: ORDER_CREATED on the topic for an order that never committed: \d+ \(e\.g\. [0-9a-f-]{36}/,
    );
  });

  it('the outbox loses and invents nothing under the same faults', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('dual-write-outbox');
    reports.push(report);
    expect(report.writeMode).toBe('outbox');
    expectEveryInvariantHeld(report);
    for (const name of ['lost', 'ghost', 'ghostReservations', 'ghostPayments', 'stuckPending'])
      expect(figure(report, name), name).toBe(0);
  });
});
