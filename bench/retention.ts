/**
 * Retention benchmark: how to remove published events from a large outbox, and whether the claim
 * query stays fast when the table holds millions of published rows.
 *
 *   node bench/retention.ts [--help]
 *
 * One fresh database (createOutboxDatabase: the real shared migrations) holds three tables:
 *   outbox      the real table. Published rows are loaded in stages (100k, 1M, 2M by default),
 *               spread evenly over `--days` days, plus `--pending` pending rows over `--aggregates`
 *               aggregates. Retention A runs on it: the real deletePublished, batch after batch,
 *               exactly like apps/relay/src/engine/retention.ts.
 *   outbox_p    the same rows in a table partitioned by day on created_at (built here only; the
 *               primary key and the seq unique constraint must include created_at). Retention B
 *               drops the old day partitions (DETACH … CONCURRENTLY, then DROP TABLE).
 *   outbox_ref  only the pending rows (0 published): the baseline the claim latency is paired with.
 *
 * The claim is the real claimBatch on `outbox`; on the other two tables it is the very same SQL
 * (captured from claimBatch, only the table name replaced). Every claim runs inside BEGIN …
 * ROLLBACK, so nothing is consumed. Claim measurements are interleaved: each round claims on every
 * table in an order that rotates from round to round. Not a test: it prints a table and writes
 * <out>.json (machine, settings, parameters, every raw sample, the plans) and <out>.md.
 * The parts: bench/retention/: params, timing, claims, plans, tables, stages (claim at scale, the
 * partitioned copy), removal (retention A and B, the lock demonstration), report.
 */

import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { claimSql, measureClaims, vacuumForClaims } from './retention/claims.ts';
import { bench, cutoff, dataStart, log, midnight, params } from './retention/params.ts';
import { explainClaim, type Plan } from './retention/plans.ts';
import { type Connections, lockDemo, retentionA, retentionB } from './retention/removal.ts';
import { markdownReport, type RetentionResults } from './retention/report.ts';
import { buildPartitioned, claimAtScale, type Stage } from './retention/stages.ts';
import { loadavg } from './support/environment.ts';

const startedAt = Date.now();
const loadavgBefore = loadavg();
const db = await createOutboxDatabase('bench_retention');
// Interrupted: drop the database anyway (`with (force)` ends our own connections).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: dropping ${db.name}`);
    // Our connections are about to be terminated; their errors no longer matter.
    process.on('uncaughtException', () => {});
    db.drop().finally(() => process.exit(130));
  });
}
const admin = new pg.Client({ connectionString: db.url });
const claimClient = new pg.Client({ connectionString: db.url });
const pool = new pg.Pool({ connectionString: db.url, max: 2 });
const connections: Connections = { url: db.url, admin, pool };

let stages: Stage[] = [];
let report: RetentionResults;

try {
  await admin.connect();
  await claimClient.connect();
  await admin.query(`set maintenance_work_mem = '256MB'`);

  // Claim at scale: the real table, grown stage by stage.
  stages = await claimAtScale(admin, claimClient);
  const plans: Plan[] = stages.map((stage) => stage.plan);
  const { partitions, buildMs } = await buildPartitioned(admin);

  // Claim on the full tables, partitioned vs not.
  await vacuumForClaims(admin, ['A', 'P', 'R']);
  plans.push(await explainClaim(claimClient, 'outbox_p', 'full size, before retention'));
  const claimPhases = [
    await measureClaims(claimClient, admin, 'full size, before retention', ['A', 'P', 'R']),
  ];

  const A = await retentionA(connections);
  const B = await retentionB(connections, partitions);
  const locks = await lockDemo(connections);

  // Claim after retention.
  await vacuumForClaims(admin, ['A', 'P', 'R']);
  plans.push(await explainClaim(claimClient, 'outbox', 'after retention (A vacuumed)'));
  plans.push(await explainClaim(claimClient, 'outbox_p', 'after retention'));
  claimPhases.push(await measureClaims(claimClient, admin, 'after retention (A vacuumed)', ['A', 'P', 'R']));

  report = {
    durationSec: Math.round((Date.now() - startedAt) / 1000),
    ...(await bench.header(testPostgresUrl, [
      'shared_buffers',
      'work_mem',
      'maintenance_work_mem',
      'max_wal_size',
      'checkpoint_timeout',
      'full_page_writes',
      'wal_compression',
      'synchronous_commit',
      'autovacuum',
    ])),
    loadavgBefore,
    loadavgAfter: loadavg(),
    parameters: params,
    /** The claim statement as claimBatch sent it in this run (it has changed over time). */
    claimSql: claimSql.trim(),
    data: {
      dataStart: dataStart.toISOString(),
      dataEnd: midnight.toISOString(),
      cutoff: cutoff.toISOString(),
      partitions: partitions.map((p) => p.name),
      buildPartitionedMs: buildMs,
    },
    claimAtScale: stages.map(({ plan: _plan, ...stage }) => stage),
    claimPhases,
    retention: { A, B, lockDemo: locks },
    plans,
  };
} finally {
  await pool.end();
  await claimClient.end();
  await admin.end();
  await db.drop();
}

bench.write(report, markdownReport(report, stages), 'off');
