import { join } from 'node:path';
import {
  findScenario,
  formatText,
  INVARIANTS,
  runScenario,
  type Scenario,
  type ScenarioReport,
  writeReports,
} from '@outbox/chaos';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { KafkaClientName, KafkaGroupProtocol } from '@outbox/runtime/kafka';
import { expect } from 'vitest';

const resultsDir = join(import.meta.dirname, '../../test-results/chaos');

/** A scenario, a few minutes at most, and the time vitest should allow it. */
export const SCENARIO_TIMEOUT_MS = 300_000;

/**
 * Run a scenario through the same runner as `npm run chaos`, on the test run's shared broker
 * (scenarios that break the broker start their own), and keep its report as a CI artifact in
 * test-results/chaos/<scenario>[.<client>[-<protocol>]].{json,md}.
 */
export async function runChaosScenario(
  name: string,
  overrides: Pick<Partial<Scenario>, 'maxStallMs'> = {},
  /** KAFKA_CLIENT of every process; the default client when left out. */
  kafkaClient?: KafkaClientName,
  /** KAFKA_GROUP_PROTOCOL of every consumer (needs kafkaClient platformatic for `consumer`); classic when left out. */
  groupProtocol?: KafkaGroupProtocol,
): Promise<ScenarioReport> {
  const found = findScenario(name);
  if (!found) throw new Error(`no chaos scenario named ${name}`);
  const scenario = { ...found, ...overrides };
  const report = await runScenario(scenario, {
    kafkaBrokers: sharedKafkaBrokers(),
    log: console.log,
    ...(kafkaClient ? { kafkaClient } : {}),
    ...(groupProtocol ? { groupProtocol } : {}),
  });
  const client = [kafkaClient, groupProtocol].filter(Boolean).join('-');
  const file = client ? `${name}.${client}` : name;
  writeReports([report], {
    json: join(resultsDir, `${file}.json`),
    markdown: join(resultsDir, `${file}.md`),
  });
  console.log(formatText(report));
  return report;
}

/** The system went quiet and every invariant held; on failure, the message lists each violation. */
export function expectEveryInvariantHeld(report: ScenarioReport): void {
  expect(report.error).toBeUndefined();
  expect(report.quiescence.outstanding, 'work left when the deadline passed').toEqual([]);
  expect(report.invariants).toHaveLength(INVARIANTS.length);
  const failed = report.invariants.filter((result) => !result.passed);
  expect(failed.map((result) => `${result.name}: ${result.violations.join('; ')}`)).toEqual([]);
  expect(report.opsEndpoints.failures, 'a process that should be up gave no answer or crashed').toEqual([]);
  expect(report.passed).toBe(true);
}

/** A figure an invariant counted, e.g. count(report, 'duplicates-reconcile', 'order.events duplicates'). */
export function count(report: ScenarioReport, invariant: string, name: string): number {
  const value = report.invariants.find((result) => result.name === invariant)?.counts[name];
  if (value === undefined) throw new Error(`${invariant} has no count named ${name}`);
  return value;
}
