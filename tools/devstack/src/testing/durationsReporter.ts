import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { type RunRecord, runRecordLine, startRun } from '../runRecord.ts';

/** One test file's time in a run: from its worker's start to its last hook, and whether it passed. */
export type FileDuration = { file: string; seconds: number; budgetSeconds: number; state: string };

/** What a run of the suite writes: where and when it ran, and every file's time. */
export type SuiteDurations = {
  tier: string;
  revision: string;
  date: string;
  machine: { cpuModel: string; cpus: number };
  loadavgBefore: number[];
  loadavgAfter: number[];
  /** The same two readings, under the name every results file uses. */
  loadAverage: { before: number[]; after: number[] };
  tracing: string;
  wallSeconds: number;
  files: FileDuration[];
  /** The run's record, as every results file has it (runRecord.ts). */
  run?: RunRecord;
};

type DurationsReporterOptions = {
  /** Which tier of the suite ran (`default` or `long`), written into the results. */
  tier: string;
  /** Seconds a file may take before the run fails, by path from the repository root. */
  budgets: Readonly<Record<string, number>>;
  defaultBudgetSeconds: number;
  /** Where the results go, without extension: `<out>.json` and `<out>.md`. */
  out: string;
};

const round1 = (x: number) => Math.round(x * 10) / 10;
const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);

/** A file's whole time: the harness, the import (with its suite callbacks), the hooks and the tests. */
function fileSeconds(module: TestModule): number {
  const d = module.diagnostic();
  return (
    (d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration) / 1000
  );
}

function durationsMarkdown(run: SuiteDurations, limit = Number.POSITIVE_INFINITY): string {
  const sum = run.files.reduce((total, f) => total + f.seconds, 0);
  const rows = run.files
    .slice(0, limit)
    .map((f) => `| \`${f.file}\` | ${f.seconds.toFixed(1)} | ${f.budgetSeconds} | ${f.state} |`);
  return [
    `# Test suite, ${run.tier} tier: ${run.files.length} files, ${run.wallSeconds.toFixed(0)} s of tests`,
    '',
    `Revision \`${run.revision}\`, ${run.date}, ${run.machine.cpuModel} × ${run.machine.cpus}, load average ` +
      `${run.loadavgBefore.join(' ')} before and ${run.loadavgAfter.join(' ')} after; the files' times add up to ${sum.toFixed(0)} s.`,
    '',
    '| file | seconds | budget, s | state |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
    ...(run.run ? [runRecordLine(run.run), ''] : []),
  ].join('\n');
}

/**
 * Records every test file's time, prints the slowest twenty, writes the results, and fails the run
 * when a file went over its budget (the table in test-budgets.ts), naming the file and its time: a
 * suite that must fit CI's window cannot grow a minute at a time unnoticed.
 */
export default class DurationsReporter implements Reporter {
  private readonly started = Date.now();
  private readonly loadavgBefore = loadavg();
  // The revision when the run starts, not when its results are written after the last file.
  private readonly recording = startRun();
  private root = process.cwd();
  private readonly options: DurationsReporterOptions;

  constructor(options: DurationsReporterOptions) {
    this.options = options;
  }

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length === 0) return;
    const { budgets, defaultBudgetSeconds, tier, out } = this.options;
    const files = modules
      .map((module): FileDuration => {
        const file = relative(this.root, module.moduleId);
        return {
          file,
          seconds: round1(fileSeconds(module)),
          budgetSeconds: budgets[file] ?? defaultBudgetSeconds,
          state: module.state(),
        };
      })
      .sort((a, b) => b.seconds - a.seconds);
    // Tests that trace start their own receivers; no process of the suite exports to a collector.
    const record = this.recording.finish('off, except in the tests of tracing itself');
    const { revision, clean } = record;
    const loadavgAfter = loadavg();
    const run: SuiteDurations = {
      tier,
      revision: revision ? `${revision}${clean === false ? '+changes' : ''}` : 'unknown',
      date: new Date(this.started).toISOString(),
      machine: { cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown', cpus: os.cpus().length },
      loadavgBefore: this.loadavgBefore,
      loadavgAfter,
      loadAverage: { before: this.loadavgBefore, after: loadavgAfter },
      tracing: record.tracing,
      wallSeconds: round1((Date.now() - this.started) / 1000),
      files,
      run: record,
    };
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(`${out}.json`, `${JSON.stringify(run, null, 2)}\n`);
    writeFileSync(`${out}.md`, durationsMarkdown(run));

    console.log(`\nThe ${Math.min(20, files.length)} slowest test files (all of them: ${out}.md):\n`);
    for (const f of files.slice(0, 20)) console.log(`  ${f.seconds.toFixed(1).padStart(7)} s  ${f.file}`);
    const over = files.filter((f) => f.state !== 'skipped' && f.seconds > f.budgetSeconds);
    for (const f of over) {
      console.error(
        `test budget: ${f.file} took ${f.seconds.toFixed(1)} s, over its ${f.budgetSeconds} s budget (test-budgets.ts)`,
      );
    }
    if (over.length > 0) process.exitCode = 1;
  }
}
