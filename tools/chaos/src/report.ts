import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { runRecordLine } from '@outbox/devstack/run-record';
import { DUAL_WRITE_COUNTS } from './invariants/index.ts';

import type { PartitionFigure } from './partitionWindows.ts';
import type { ProgressGaps } from './progressWatch.ts';
import type { ScenarioReport } from './scenarioReport.ts';

const seconds = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);
const counts = (values: Record<string, number>) =>
  Object.entries(values)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');

/** Shed against accepted, and how fast each was answered (client side, the last attempt). */
function shedLine(report: ScenarioReport): string {
  const { shed, shedAnswers, accepted, answerMs, decisionMs, durationMs } = report.load;
  const p = (latency: { p50: number; p99: number }) => `p50 ${ms(latency.p50)}, p99 ${ms(latency.p99)}`;
  return (
    `shed ${shed} orders (503 overloaded at their last attempt; ${shedAnswers} shed answers in all), ` +
    `accepted ${accepted} (${((accepted * 1000) / Math.max(1, durationMs)).toFixed(1)}/s over the load); ` +
    `answered in: accepted ${p(answerMs.accepted)}, shed ${p(answerMs.shed)} (client side); ` +
    `confirmed in ${p(decisionMs.confirmed)} (created → decided, orders database)`
  );
}

const ms = (value: number) => `${Math.round(value)} ms`;

/** Which Kafka client the run's processes were on, and the consumers' group protocol, when the run chose them. */
function clientOfRun(report: ScenarioReport, emphasis = ''): string {
  const protocol = report.groupProtocol
    ? `, the consumers on the ${emphasis}${report.groupProtocol}${emphasis} group protocol`
    : '';
  if (report.kafkaClient) return `every process on ${emphasis}${report.kafkaClient}${emphasis}${protocol}`;
  if (report.relayKafkaClient)
    return `the relays only on ${emphasis}${report.relayKafkaClient}${emphasis} (the consumers on kafkajs)`;
  return '';
}

/** Each consumer group's longest stretch without applying an event. */
const groupWindows = (progress: ProgressGaps) =>
  Object.entries(progress.longestWithoutApplyingMsByGroup)
    .map(([group, gap]) => `${group} ${seconds(gap)}`)
    .join(', ');

/** One member's figure in words: its partitions, and how long they stood still or waited. */
function partitionFigure(figure: PartitionFigure): string {
  if (figure.kind === 'takeover')
    return (
      `${figure.group}, ${figure.label}: its ${figure.partitions} partitions applied again after ` +
      `${figure.consumedAgainAfterMs === null ? 'never, within the window' : seconds(figure.consumedAgainAfterMs)} ` +
      `(session timeout ${seconds(figure.sessionTimeoutMs)}; window ${seconds(figure.windowMs)})`
    );
  if (figure.longestWithoutApplyingMs === undefined)
    return `${figure.group}, ${figure.label}: the staying member kept no partition through it`;
  return (
    `${figure.group}, ${figure.label}: the ${figure.partitions} partitions the staying member kept through it ` +
    `stood still at most ${seconds(figure.longestWithoutApplyingMs)} (${seconds(figure.beforeMs)} in the 10 s before; ` +
    `${figure.moved ?? 0} others moved; window ${seconds(figure.windowMs)})`
  );
}

/** How long nothing had moved when the wait for quiet gave up, when known. */
function stillFor(report: ScenarioReport): string {
  const still = report.quiescence.stillForMs;
  return still === undefined ? '' : ` (nothing moved for the last ${seconds(still)})`;
}

/** A few lines per scenario for the terminal: verdict, figures, and every violation. */
export function formatText(report: ScenarioReport): string {
  const lines = [
    `${report.passed ? 'PASS' : 'FAIL'} ${report.scenario} (${seconds(report.durationMs)}, write mode ${report.writeMode}, relay ${report.relayMode}${clientOfRun(report) ? `, ${clientOfRun(report)}` : ''}): ${report.breaks}`,
    `  load: ${report.load.accepted} orders accepted of ${report.load.sent} sent, ${report.load.retries} retries` +
      ` (${report.load.rate}/s for ${seconds(report.load.durationMs)}, seed ${report.load.seed})`,
    ...(report.load.shedAnswers > 0 ? [`  ${shedLine(report)}`] : []),
    `  quiet ${seconds(report.quiescence.afterLoadMs)} after the load; recovered ${seconds(report.quiescence.recoveryMs)} after the last fault was cleared`,
  ];
  if (report.progress)
    lines.push(
      `  while the load ran: at most ${seconds(report.progress.longestWithoutPublishingMs)} without an event published, ` +
        `${seconds(report.progress.longestWithoutApplyingMs)} without one applied ` +
        `(${groupWindows(report.progress)})` +
        (report.stall
          ? `; target ${seconds(report.stall.targetMs)}: ${report.stall.withinTarget ? 'within' : 'EXCEEDED'}`
          : ''),
    );
  if (report.progress)
    lines.push(`  longest order decision (created → decided): ${ms(report.load.decisionMs.confirmed.max)}`);
  for (const figure of report.partitionWindows ?? []) lines.push(`  per member: ${partitionFigure(figure)}`);
  if (!report.quiescence.reached) {
    lines.push(`  NOT QUIET: ${report.quiescence.outstanding.join('; ')}${stillFor(report)}`);
    for (const step of report.quiescence.trail ?? [])
      lines.push(`      ${seconds(step.afterMs)} into the wait: ${step.outstanding.join('; ') || 'nothing'}`);
  }
  for (const result of report.invariants) {
    lines.push(`  ${result.passed ? '✓' : '✗'} ${result.name}: ${counts(result.counts)}`);
    for (const violation of result.violations) lines.push(`      ${violation}`);
  }
  const ops = report.opsEndpoints;
  lines.push(`  ${ops.failures.length === 0 ? '✓' : '✗'} ops endpoints answered: scrapes ${ops.scrapes}`);
  for (const failure of ops.failures) lines.push(`      ${failure}`);
  if (report.error) lines.push(`  ERROR: ${report.error}`);
  return lines.join('\n');
}

/**
 * The naive dual writes next to the outbox: one row per scenario, the figures of
 * no-lost-or-ghost-orders (lost, ghost, duplicates, stuck orders). Empty without a naive run.
 */
export function formatDualWriteTable(reports: ScenarioReport[]): string {
  if (!reports.some((r) => r.writeMode !== 'outbox')) return '';
  const out = [
    `| write mode | verdict | orders accepted | ${Object.values(DUAL_WRITE_COUNTS).join(' | ')} |`,
    `| --- | --- | --- | ${Object.keys(DUAL_WRITE_COUNTS)
      .map(() => '---')
      .join(' | ')} |`,
  ];
  for (const r of reports) {
    const counts = r.invariants.find((result) => result.name === 'no-lost-or-ghost-orders')?.counts ?? {};
    out.push(
      `| ${r.writeMode} | ${r.passed ? 'pass' : '**FAIL**'} | ${r.load.accepted} / ${r.load.sent} | ` +
        `${Object.keys(DUAL_WRITE_COUNTS)
          .map((name) => counts[name] ?? '–')
          .join(' | ')} |`,
    );
  }
  return `${out.join('\n')}\n`;
}

const TOPICS = ['order.events', 'reservation.events', 'payment.events'];

/**
 * Duplicates on the topics per scenario and what published the outboxes (polling, Debezium,
 * Debezium with exactly-once source): copies beyond the first, from duplicates-reconcile's counts.
 * Empty unless a CDC scenario ran.
 */
function formatDuplicatesTable(reports: ScenarioReport[]): string {
  if (!reports.some((r) => r.relayMode !== 'polling')) return '';
  const out = [
    `| scenario | relay | verdict | orders accepted / sent | messages on topics | duplicates on topics (${TOPICS.join(' / ')}) | consumers' own duplicate counters (inventory / billing / orders) |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of reports) {
    const c = r.invariants.find((result) => result.name === 'duplicates-reconcile')?.counts ?? {};
    const sum = (suffix: string) =>
      TOPICS.reduce((total, topic) => total + (c[`${topic} ${suffix}`] ?? 0), 0);
    const own = ['inventory', 'billing', 'orders']
      .map((consumer) => c[`${consumer} consumer: own duplicate counter since its last start`] ?? '–')
      .join(' / ');
    out.push(
      `| ${r.scenario} | ${r.relayMode} | ${r.passed ? 'pass' : '**FAIL**'} | ${r.load.accepted} / ${r.load.sent} | ` +
        `${sum('messages')} | ${sum('duplicates')} (${TOPICS.map((topic) => c[`${topic} duplicates`] ?? '–').join(' / ')}) | ${own} |`,
    );
  }
  return `${out.join('\n')}\n`;
}

/** The same as a Markdown section per scenario, for CI artifacts and docs/chaos.md. */
function formatMarkdown(reports: ScenarioReport[]): string {
  const out = ['# Chaos run', ''];
  const dualWrites = formatDualWriteTable(reports);
  if (dualWrites) out.push('## What the outbox prevents: naive dual writes vs the outbox', '', dualWrites);
  const duplicates = formatDuplicatesTable(reports);
  if (duplicates) out.push('## Duplicates on the topics: polling or CDC', '', duplicates);
  out.push(
    '| scenario | verdict | orders accepted | shed | retries | quiet after load | recovery | duration |',
  );
  out.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of reports) {
    out.push(
      `| ${r.scenario} | ${r.passed ? 'pass' : '**FAIL**'} | ${r.load.accepted} / ${r.load.sent} | ${r.load.shed} | ${r.load.retries} | ` +
        `${seconds(r.quiescence.afterLoadMs)} | ${seconds(r.quiescence.recoveryMs)} | ${seconds(r.durationMs)} |`,
    );
  }
  for (const r of reports) {
    out.push('', `## ${r.scenario}`, '', `**Breaks:** ${r.breaks}`, '', `**Expected:** ${r.expectation}`, '');
    out.push(
      `${r.run ? `${runRecordLine(r.run)} ` : `Started ${r.startedAt} at revision ${r.revision ?? 'unknown'}, ${r.target === 'compose' ? "tracing on (to the compose stack's Zipkin)" : 'tracing off (the chaos stack exports no spans)'}. `}` +
        `${r.target === 'compose' ? 'On the compose stack. ' : ''}` +
        `Load ${r.load.rate}/s for ${seconds(r.load.durationMs)}, seed ${r.load.seed}; ` +
        `outboxes published by: ${r.relayMode === 'polling' ? 'the polling relays' : `Debezium connectors (${r.relayMode})`}${clientOfRun(r, '**') ? `; Kafka client (KAFKA_CLIENT): ${clientOfRun(r, '**')}` : ''}.`,
      '',
    );
    if (r.progress)
      out.push(
        `While the load ran, the longest stretch without an event published: ${seconds(r.progress.longestWithoutPublishingMs)}; ` +
          `without one applied: ${seconds(r.progress.longestWithoutApplyingMs)} (by consumer group: ${groupWindows(r.progress)}); ` +
          `longest order decision: ${ms(r.load.decisionMs.confirmed.max)}` +
          (r.stall
            ? `; target ${seconds(r.stall.targetMs)}: ${r.stall.withinTarget ? 'within' : '**exceeded**'}.`
            : '.'),
        '',
      );
    if (r.load.shedAnswers > 0) out.push(`${shedLine(r)}.`, '');
    if (r.partitionWindows?.length)
      out.push(
        '**Per member** (from the topics and processed_events, which member held what from the group coordinator):',
        '',
        ...r.partitionWindows.map((figure) => `- ${partitionFigure(figure)}`),
        '',
      );
    if (r.timeline.length > 0) {
      out.push('| at | fault |', '| --- | --- |');
      for (const step of r.timeline) out.push(`| ${seconds(step.atMs)} | ${step.what} |`);
      out.push('');
    }
    if (!r.quiescence.reached) {
      out.push(`**Not quiet at the deadline:** ${r.quiescence.outstanding.join('; ')}${stillFor(r)}`, '');
      const trail = r.quiescence.trail ?? [];
      if (trail.length > 0) {
        out.push('| into the wait | outstanding |', '| --- | --- |');
        for (const step of trail) out.push(`| ${seconds(step.afterMs)} | ${step.outstanding.join('; ')} |`);
        out.push('');
      }
    }
    out.push('| invariant | verdict | counts |', '| --- | --- | --- |');
    for (const result of r.invariants) {
      out.push(`| ${result.name} | ${result.passed ? 'pass' : '**FAIL**'} | ${counts(result.counts)} |`);
    }
    const violations = r.invariants.flatMap((result) =>
      result.violations.map((v) => `- ${result.name}: ${v}`),
    );
    const ops = r.opsEndpoints;
    out.push(
      `| ops endpoints answered (/metrics, /healthz every ~1 s) | ${ops.failures.length === 0 ? 'pass' : '**FAIL**'} | scrapes ${ops.scrapes} |`,
    );
    violations.push(...ops.failures.map((failure) => `- ops endpoints: ${failure}`));
    if (violations.length > 0) out.push('', '**Violations:**', '', ...violations);
    if (r.error) out.push('', '**Error:**', '', '```', r.error, '```');
  }
  return `${out.join('\n')}\n`;
}

export function writeReports(reports: ScenarioReport[], paths: { json: string; markdown: string }): void {
  for (const path of [paths.json, paths.markdown]) mkdirSync(dirname(path), { recursive: true });
  writeFileSync(paths.json, `${JSON.stringify(reports, null, 2)}\n`);
  writeFileSync(paths.markdown, formatMarkdown(reports));
}
