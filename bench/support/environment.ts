/** What every benchmark report records about where it ran, and how it writes its results. */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { type RunRecord, runRecordLine, startRun } from '@outbox/devstack/run-record';
import { markdownTableLines } from '@outbox/devstack/table';
import pg from 'pg';
import { round } from './stats.ts';

export type MachineInfo = {
  platform: string;
  release: string;
  arch: string;
  cpuModel: string;
  cpus: number;
  totalMemGiB: number;
};

/** Where and when a benchmark ran: the head of every results file. */
export type RunHeader = {
  date: string;
  machine: MachineInfo;
  node: string;
  postgres: Record<string, string>;
};

export function machineInfo(): MachineInfo {
  return {
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cpus: os.cpus().length,
    totalMemGiB: round(os.totalmem() / 2 ** 30, 1),
  };
}

export const loadavg = () => os.loadavg().map((x) => round(x, 2));

/** The settings that decide commit cost: what the write-path and relay benchmarks record. */
const COMMIT_SETTINGS = [
  'synchronous_commit',
  'fsync',
  'wal_sync_method',
  'shared_buffers',
  'max_connections',
];

/** Server version and the given settings (`show <setting>`), for the results file. */
export async function postgresInfo(url: string, settings = COMMIT_SETTINGS): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const info: Record<string, string> = {};
    for (const setting of ['server_version', ...settings]) {
      const { rows } = await client.query(`show ${setting}`);
      info[setting === 'server_version' ? 'version' : setting] = String(Object.values(rows[0] ?? {})[0]);
    }
    info.version = `PostgreSQL ${info.version}`;
    return info;
  } finally {
    await client.end();
  }
}

export function logger(benchmark: string): (message: string) => void {
  return (message) => process.stderr.write(`[${benchmark}] ${message}\n`);
}

// Taken when the benchmark's process starts, that is when its run starts: the revision and the
// load before anything is measured (tools/devstack/src/runRecord.ts).
const run = startRun();

/**
 * Write `<out>.json` and `<out>.md`, and print the Markdown. Both carry the run's record (revision
 * and whether the tree was clean, start and end, CPU model, load before and after) with `tracing`:
 * what the processes it measured exported (`off`, `on`, or per variant).
 */
export function writeResults(
  out: string,
  report: Record<string, unknown>,
  markdown: string,
  tracing: string,
): void {
  const record = run.finish(tracing);
  const withRecord = `${markdown.trimEnd()}\n\n${runRecordLine(record)}\n`;
  mkdirSync(dirname(`${out}.json`), { recursive: true });
  // The load average also under the name the test suite's and the compose build's results use.
  const loadAverage = { before: record.loadBefore, after: record.loadAfter };
  writeFileSync(`${out}.json`, `${JSON.stringify({ run: record, loadAverage, ...report }, null, 2)}\n`);
  writeFileSync(`${out}.md`, withRecord);
  process.stdout.write(`\n${withRecord}\n`);
}

/** A report as writeResults writes it to `<out>.json`: the run's record and load average, then the report. */
export type Written<Report> = { run: RunRecord; loadAverage: { before: number[]; after: number[] } } & Report;

/** Each ratio's value in every run and its median over runs: the table of a report over several runs. */
export function perRunRatiosTable(ratios: Record<string, { median: number; perRun: number[] }>): string[] {
  return markdownTableLines(
    ['ratio', 'per run', 'median'],
    Object.entries(ratios).map(([name, value]) => [
      name,
      value.perRun.map((v) => v.toFixed(3)).join(', '),
      value.median.toFixed(3),
    ]),
  );
}
