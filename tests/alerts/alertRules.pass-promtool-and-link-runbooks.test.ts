// The Prometheus alert rules (infra/prometheus/alerts.yml): promtool accepts them, their unit tests
// (infra/prometheus/tests/alerts.test.yml) pass, and every alert is documented and tested:
// summary, description and a runbook_url whose anchor is a heading of docs/runbooks.md, a firing and
// a not-firing promtool case, and only metrics the services actually export.
// promtool is required, not optional: CI installs it (.ci/run, Debian package `prometheus`).

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fromRoot = (...segments: string[]) => path.join(root, ...segments);
const loadYaml = (file: string): unknown => parseYaml(readFileSync(fromRoot(file), 'utf8'));

const rulesFile = 'infra/prometheus/alerts.yml';
const rulesTestFile = 'infra/prometheus/tests/alerts.test.yml';
const runbooksFile = 'docs/runbooks.md';

type Rule = {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
};
type RuleFile = { groups: { name: string; rules: Rule[] }[] };
type AlertRuleTest = { eval_time: string; alertname: string; exp_alerts?: unknown[] | null };
type RuleTestFile = {
  rule_files: string[];
  tests: { name?: string; alert_rule_test?: AlertRuleTest[] }[];
};

const alerts = (loadYaml(rulesFile) as RuleFile).groups
  .flatMap((group) => group.rules)
  .filter((rule): rule is Rule & { alert: string } => typeof rule.alert === 'string');
const ruleTests = loadYaml(rulesTestFile) as RuleTestFile;

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Runs promtool from the repository root; a missing promtool is a failure with a clear message. */
function promtool(...args: string[]) {
  const command = findOnPath('promtool');
  if (!command) {
    throw new Error(
      'promtool is not installed, so the alert rules cannot be checked. Install it with ' +
        '`apt-get install -y prometheus` (Debian; .ci/run does this in CI) or put a Prometheus ' +
        "release's promtool on PATH.",
    );
  }
  const run = spawnSync(command, args, { cwd: root, encoding: 'utf8' });
  return { status: run.status, output: `$ promtool ${args.join(' ')}\n${run.stdout}\n${run.stderr}` };
}

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

describe('Prometheus alert rules', () => {
  it('promtool check rules accepts alerts.yml', () => {
    const run = promtool('check', 'rules', rulesFile);
    expect(run.status, run.output).toBe(0);
  });

  it('promtool test rules passes the unit tests', () => {
    const run = promtool('test', 'rules', rulesTestFile);
    expect(run.status, run.output).toBe(0);
  });

  it('are loaded by both Prometheus configurations', () => {
    for (const config of ['infra/prometheus/prometheus.yml', 'infra/prometheus/prometheus.local.yml']) {
      const { rule_files: ruleFiles = [] } = loadYaml(config) as { rule_files?: string[] };
      expect(ruleFiles, config).toContain(path.relative(path.dirname(config), rulesFile));
    }
    expect(ruleTests.rule_files.map((file) => path.join(path.dirname(rulesTestFile), file))).toContain(
      rulesFile,
    );
  });

  it('has alerts, each with a unique name', () => {
    expect(alerts.length).toBeGreaterThan(0);
    const names = alerts.map((rule) => rule.alert);
    expect(new Set(names).size, names.join(', ')).toBe(names.length);
  });

  it.each(alerts.map((rule) => [rule.alert, rule] as const))(
    '%s has a severity, a summary, a description and a runbook_url',
    (_name, rule) => {
      expect(['critical', 'warning']).toContain(rule.labels?.severity);
      for (const key of ['summary', 'description', 'runbook_url']) {
        expect(rule.annotations?.[key]?.trim(), key).toBeTruthy();
      }
    },
  );

  it('links every alert to its section of docs/runbooks.md', () => {
    const headings = readFileSync(fromRoot(runbooksFile), 'utf8')
      .split('\n')
      .filter((line) => /^#{1,6}\s/.test(line))
      .map((line) => line.replace(/^#+\s+/, ''));
    const anchors = new Set(headings.map(anchorOf));
    for (const { alert, annotations } of alerts) {
      // One form for all: the path from the repository root, anchor = the alert's heading.
      expect(annotations?.runbook_url, alert).toBe(`${runbooksFile}#${anchorOf(alert)}`);
      expect(headings, `${runbooksFile} has no heading "${alert}"`).toContain(alert);
      const anchor = annotations?.runbook_url?.split('#')[1] ?? '';
      expect(anchors.has(anchor), `${runbooksFile} has no anchor #${anchor}`).toBe(true);
    }
  });

  it('tests every alert both firing and not firing', () => {
    const text = readFileSync(fromRoot(rulesTestFile), 'utf8');
    const cases = ruleTests.tests.flatMap((test) => test.alert_rule_test ?? []);
    for (const { alert } of alerts) {
      expect(text.split(alert).length - 1, `${alert} is named in ${rulesTestFile}`).toBeGreaterThanOrEqual(2);
      const own = cases.filter((test) => test.alertname === alert);
      expect(
        own.some((test) => (test.exp_alerts ?? []).length > 0),
        `${rulesTestFile} has a case where ${alert} fires`,
      ).toBe(true);
      expect(
        own.some((test) => (test.exp_alerts ?? []).length === 0),
        `${rulesTestFile} has a case where ${alert} does not fire`,
      ).toBe(true);
    }
    const known = new Set(alerts.map((rule) => rule.alert));
    for (const test of cases)
      expect(known, `test of unknown alert ${test.alertname}`).toContain(test.alertname);
  });

  it('uses only metrics that the services export', () => {
    // The metric names registered in code (prom-client `name: '...'`), plus the series a histogram
    // exports and Prometheus' own `up`. A renamed metric would otherwise silently never alert.
    const sources = [
      'apps/relay/src/engine/metrics.ts',
      'apps/relay/src/cdc/cdcMetrics.ts',
      'packages/inbox/src/consumerMetrics.ts',
      'apps/orders/src/http/httpMetrics.ts',
      'apps/orders/src/http/admission.ts',
      'packages/runtime/src/standbyWait.ts',
    ];
    const exported = new Set(['up']);
    for (const source of sources) {
      for (const [, name] of readFileSync(fromRoot(source), 'utf8').matchAll(/name: '([a-z_:]+)'/g)) {
        for (const suffix of ['', '_bucket', '_sum', '_count']) exported.add(`${name}${suffix}`);
      }
    }
    for (const { alert, expr } of alerts) {
      const used = expr.match(/\b(?:outbox|consumer|http|database)_[a-z_]+\b|\bup\b/g) ?? [];
      expect(used.length, alert).toBeGreaterThan(0);
      for (const metric of used) expect(exported, `${alert} uses ${metric}`).toContain(metric);
    }
  });
});
