// One chaos scenario from start to verdict, step by step: what it runs on (scenarioEnvironment.ts),
// the load and the fault script side by side (loadAndFaults.ts), then quiet and the invariants
// (verdict.ts). Whatever happens, everything the run started is removed again.

import { cpus, loadavg } from 'node:os';
import { startRun } from '@outbox/devstack/run-record';
import { readStock } from './invariants/index.ts';
import { DEFAULT_LOAD, runLoadAndFaults } from './loadAndFaults.ts';
import { startOpsScraper } from './opsScraper.ts';
import { codeRevision } from './revision.ts';
import type { Scenario } from './scenario.ts';
import {
  dispose,
  type ScenarioEnvironment,
  type SystemChoice,
  startEnvironment,
} from './scenarioEnvironment.ts';
import type { ScenarioReport } from './scenarioReport.ts';
import { failedReport, finishedReport, judge } from './verdict.ts';

export type { ScenarioReport } from './scenarioReport.ts';

type RunOptions = SystemChoice & {
  /** Fixes the load's sequence of orders. */
  seed?: number;
  log?: (line: string) => void;
};

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
  const started = Date.now();
  // The chaos stack starts no process with OTEL_* settings: nothing exports spans. The compose
  // stack's services export theirs to its Zipkin (docker-compose.yml, x-tracing).
  const tracing = scenario.needs?.compose ? COMPOSE_TRACING : 'off';
  const recorded = (report: ScenarioReport): ScenarioReport => {
    const run = recording.finish(tracing);
    const revision = codeRevision(run);
    return { ...report, ...(revision ? { revision } : {}), run };
  };
  const log = (line: string) => options.log?.(`[${scenario.name}] ${line}`);
  const env: ScenarioEnvironment = { kafkaBrokers: [] };
  const timeline: ScenarioReport['timeline'] = [];
  try {
    const stack = await startEnvironment(scenario, env, options, log);
    env.scraper = startOpsScraper(stack);
    const initialStock = await readStock(stack.databases.inventory.url);
    const load = { ...DEFAULT_LOAD, ...scenario.load };
    log(`stack up (topics ${stack.topicPrefix}*); load ${load.rate}/s for ${load.durationMs / 1000} s`);
    const run = await runLoadAndFaults(scenario, stack, env, timeline, {
      log,
      ...(options.seed === undefined ? {} : { seed: options.seed }),
    });
    const { loadResult } = run;
    log(
      `load done: ${loadResult.accepted} accepted, ${loadResult.shed} shed of ${loadResult.orders.length}; waiting until quiet`,
    );
    const verdict = await judge(scenario, stack, env, { ...run, initialStock }, log);
    const report = {
      ...finishedReport(scenario, started, timeline, run, verdict),
      machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, loadAverage: loadavg() },
      target: scenario.needs?.compose ? ('compose' as const) : ('processes' as const),
    };
    return recorded({
      ...report,
      ...(options.kafkaClient ? { kafkaClient: options.kafkaClient } : {}),
      ...(options.groupProtocol ? { groupProtocol: options.groupProtocol } : {}),
    });
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    log(`failed: ${error}`);
    return recorded(failedReport(scenario, started, timeline, error));
  } finally {
    const cleanup = Date.now();
    await dispose(env);
    log(`cleaned up in ${Date.now() - cleanup} ms`);
  }
}
