// One chaos scenario from start to verdict, step by step: what it runs on (scenarioEnvironment.ts),
// the load and the fault script side by side (loadAndFaults.ts), then quiet and the invariants
// (verdict.ts). Whatever happens, everything the run started is removed again.

import { cpus, loadavg } from 'node:os';
import { startRun } from '@outbox/devstack/run-record';
import { readStock } from './invariants/index.ts';
import { loadOf, runLoadAndFaults } from './loadAndFaults.ts';
import { startOpsScraper } from './opsScraper.ts';
import { codeRevision } from './revision.ts';
import type { Scenario } from './scenario.ts';
import { dispose, type RunOptions, type ScenarioRun, startEnvironment } from './scenarioEnvironment.ts';
import type { ScenarioReport } from './scenarioReport.ts';
import { failedReport, finishedReport, judge } from './verdict.ts';

export type { ScenarioReport } from './scenarioReport.ts';

/** What a compose scenario's run record says of tracing. */
const COMPOSE_TRACING = "on (the compose stack's services export to its Zipkin)";
/**
 * Run one scenario from start to verdict: start the system (on a broker and PostgreSQL of its
 * own when the scenario breaks them), drive load while the fault script runs, wait until the
 * system is quiet, then check every invariant against the databases and topics.
 */
export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<ScenarioReport> {
  // The revision and the load now, before the stack starts: what the run exercised, not what the
  // checkout holds when the report is written.
  const recording = startRun();
  // The chaos stack starts no process with OTEL_* settings: nothing exports spans. The compose
  // stack's services export theirs to its Zipkin (docker-compose.yml, x-tracing).
  const tracing = scenario.needs?.compose ? COMPOSE_TRACING : 'off';
  const recorded = (report: ScenarioReport): ScenarioReport => {
    const record = recording.finish(tracing);
    const revision = codeRevision(record);
    return { ...report, ...(revision ? { revision } : {}), run: record };
  };
  const run: ScenarioRun = {
    scenario,
    options,
    started: Date.now(),
    timeline: [],
    log: (line) => options.log?.(`[${scenario.name}] ${line}`),
    kafkaBrokers: [],
  };
  try {
    const stack = await startEnvironment(run);
    run.scraper = startOpsScraper(stack);
    const initialStock = await readStock(stack.databases.inventory.url);
    const load = loadOf(scenario);
    run.log(`stack up (topics ${stack.topicPrefix}*); load ${load.rate}/s for ${load.durationMs / 1000} s`);
    const loadAndFaults = await runLoadAndFaults(run, stack);
    const { loadResult } = loadAndFaults;
    run.log(
      `load done: ${loadResult.accepted} accepted, ${loadResult.shed} shed of ${loadResult.orders.length}; waiting until quiet`,
    );
    const verdict = await judge(run, stack, { ...loadAndFaults, initialStock });
    return recorded({
      ...finishedReport(run, loadAndFaults, verdict),
      machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, loadAverage: loadavg() },
      target: scenario.needs?.compose ? 'compose' : 'processes',
      ...(options.kafkaClient ? { kafkaClient: options.kafkaClient } : {}),
      ...(options.groupProtocol ? { groupProtocol: options.groupProtocol } : {}),
    });
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    run.log(`failed: ${error}`);
    return recorded(failedReport(run, error));
  } finally {
    const cleanup = Date.now();
    await dispose(run);
    run.log(`cleaned up in ${Date.now() - cleanup} ms`);
  }
}
