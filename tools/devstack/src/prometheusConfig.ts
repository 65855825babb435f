import { resolve } from 'node:path';
import { repoRoot } from './paths.ts';

/** The rules Prometheus evaluates everywhere: compose, the demo, the tests. */
export const alertRulesFile = resolve(repoRoot, 'infra/prometheus/alerts.yml');

/**
 * How often the demo's Prometheus scrapes and evaluates: every 5 s, where production (and
 * infra/prometheus/prometheus*.yml) does every 15 s. The rules and their `for:` are the real ones;
 * only the clock ticks faster, so a broker killed in the demo shows its alerts within about a
 * minute, and the console's charts have a point every 5 s.
 */
export const DEMO_PROMETHEUS_INTERVAL_SECONDS = 5;

/**
 * A Prometheus configuration that scrapes every job, one target on 127.0.0.1, and evaluates
 * `ruleFiles`, both every `intervalSeconds`. JSON is YAML, so Prometheus reads it as it is.
 */
export function prometheusConfig(jobs: Record<string, number>, ruleFiles: string[], intervalSeconds: number) {
  const interval = `${intervalSeconds}s`;
  const config = {
    global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
    rule_files: ruleFiles,
    scrape_configs: Object.entries(jobs).map(([job, port]) => ({
      job_name: job,
      static_configs: [{ targets: [`127.0.0.1:${port}`] }],
    })),
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * infra/prometheus/prometheus.local.yml at demo speed, for the ports the demo really uses (a second
 * demo, or DEMO_BASE_PORT, moves them).
 */
export function demoPrometheusConfig(jobs: Record<string, number>): string {
  return prometheusConfig(jobs, [alertRulesFile], DEMO_PROMETHEUS_INTERVAL_SECONDS);
}
