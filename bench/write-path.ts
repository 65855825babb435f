/**
 * Write-path benchmark: what does the outbox write add to the orders business transaction?
 *
 *   node bench/write-path.ts [--help]
 *
 * Every run gets a fresh database (createTestDatabase + the real orders migrations) and the real
 * PrismaClient (createPrisma, i.e. the production pool of 10 connections). Variants are
 * interleaved: each round runs every variant once, in an order that rotates from round to round,
 * so drift in machine load hits all of them alike. Ratios are computed per round (paired) and the
 * median over rounds is reported; with --runs N the median of the per-run ratios is reported too.
 * Before the warm-up, each variant's statements per transaction are counted (node-postgres'
 * Client#query, which the Prisma adapter sends every statement through, BEGIN and COMMIT included)
 * and reported beside the declared figure.
 * The parts: bench/write-path/: params, baselines (the write paths production left, kept on purpose),
 * variants, workload, run, summary, report.
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { measureRuns } from './support/runs.ts';
import { bench, log, params } from './write-path/params.ts';
import { markdownReport, type Report } from './write-path/report.ts';
import { benchmarkRun } from './write-path/run.ts';
import { variants } from './write-path/variants.ts';

const report: Report = {
  ...(await bench.header(testPostgresUrl)),
  parameters: params,
  variants: variants.map((v) => ({
    key: v.key,
    label: v.label,
    statementsPerTx: v.roundTrips,
    notifyTrigger: v.notifyTrigger !== false,
  })),
  runs: [],
  acrossRuns: {},
};

await measureRuns(report, params.runs, benchmarkRun, log);

bench.write(report, markdownReport(report), 'off');
