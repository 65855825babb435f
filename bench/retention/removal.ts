/**
 * The two ways to remove published events, each timed while a claim loop runs beside it:
 * A, the relay's deletePublished in batches; B, dropping the old day partitions. And what the
 * partition DDL does to claims when a long transaction holds the parent.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { deletePublished } from '@outbox/outbox';
import pg from 'pg';
import { quantile, round, sorted } from '../support/stats.ts';
import { claimers, loopSummary, startClaimLoop, vacuumForClaims } from './claims.ts';
import { cutoff, DAY, log, midnight, params } from './params.ts';
import type { Partition } from './stages.ts';
import { dayName, tableSizes, walLsn, walSince } from './tables.ts';
import { fmt, int, nearestRankMedian as median, now, timed } from './timing.ts';

export type Connections = { url: string; admin: pg.Client; pool: pg.Pool };

/** A: deletePublished in batches until a batch comes back short, then VACUUM. */
export async function retentionA({ url, admin, pool }: Connections) {
  log(`retention A: deletePublished(retention ${params.retentionDays} days, batch ${params.batch})`);
  const sizesBeforeA = await tableSizes(admin, 'outbox');
  const retentionMs = Date.now() - cutoff.getTime();
  await vacuumForClaims(admin, ['A', 'R']);
  const loopA = await startClaimLoop(url, [claimers.A, claimers.R]);
  const walA = await walLsn(admin);
  const batchesA: number[] = [];
  let deletedA = 0;
  const startA = now();
  for (let deleted = params.batch; deleted === params.batch; ) {
    const batch = await timed(() => deletePublished(pool, retentionMs, params.batch));
    deleted = batch.value;
    deletedA += deleted;
    batchesA.push(batch.ms);
  }
  const totalA = round(now() - startA);
  const walDeleteA = await walSince(admin, walA);
  const loopSamplesA = await loopA.stop();
  const sizesAfterA = await tableSizes(admin, 'outbox');
  const walVacuumStart = await walLsn(admin);
  const vacuumA = await timed(() => admin.query('vacuum outbox'));
  const walVacuumA = await walSince(admin, walVacuumStart);
  const sizesVacuumA = await tableSizes(admin, 'outbox');
  log(
    `retention A: ${int(deletedA)} rows in ${fmt(totalA / 1000, 1)} s (${batchesA.length} batches, longest ${fmt(Math.max(...batchesA))} ms), WAL ${walDeleteA} MiB; vacuum ${fmt(vacuumA.ms / 1000, 1)} s`,
  );
  return {
    method: `deletePublished(pool, retentionMs, ${params.batch}) until it returns < ${params.batch}`,
    rowsDeleted: deletedA,
    batches: batchesA.length,
    totalMs: totalA,
    rowsPerSec: Math.round((deletedA / totalA) * 1000),
    batchMs: {
      median: round(median(batchesA)),
      p99: round(quantile(batchesA, 0.99)),
      max: round(sorted(batchesA).at(-1) ?? Number.NaN),
    },
    walMiB: walDeleteA,
    vacuumMs: vacuumA.ms,
    vacuumWalMiB: walVacuumA,
    sizesBefore: sizesBeforeA,
    sizesAfter: sizesAfterA,
    sizesAfterVacuum: sizesVacuumA,
    claimDuring: loopSummary(loopSamplesA, 'outbox'),
    baselineClaimDuring: loopSummary(loopSamplesA, 'outbox_ref'),
    batchSamplesMs: batchesA,
    claimDuringSamples: loopSamplesA,
  };
}

/** B: per old day partition, a guard, DETACH … CONCURRENTLY, DROP TABLE. */
export async function retentionB({ url, admin }: Connections, partitions: Partition[]) {
  log('retention B: detach concurrently + drop of the old day partitions');
  const sizesBeforeB = await tableSizes(admin, 'outbox_p');
  const old = partitions.filter((p) => p.to.getTime() <= cutoff.getTime());
  const rowsIn = new Map<string, number>();
  for (const p of old) {
    rowsIn.set(p.name, Number((await admin.query(`select count(*) as n from ${p.name}`)).rows[0]?.n));
  }
  await vacuumForClaims(admin, ['P', 'R']);
  const loopB = await startClaimLoop(url, [claimers.P, claimers.R]);
  const walB = await walLsn(admin);
  const dropsB: { partition: string; rows: number; guardMs: number; detachMs: number; dropMs: number }[] = [];
  const startB = now();
  for (const p of old) {
    // Guard: a partition may only go when every event in it is published (a stuck or
    // dead-lettered event would otherwise be lost). Uses the partition's aggregate index.
    const guard = await timed(() =>
      admin.query(`select exists (select 1 from ${p.name} where status <> 'published') as unpublished`),
    );
    if (guard.value.rows[0]?.unpublished) throw new Error(`${p.name} still holds unpublished events`);
    const rows = rowsIn.get(p.name) ?? Number.NaN;
    const detach = await timed(() =>
      admin.query(`alter table outbox_p detach partition ${p.name} concurrently`),
    );
    const drop = await timed(() => admin.query(`drop table ${p.name}`));
    dropsB.push({ partition: p.name, rows, guardMs: guard.ms, detachMs: detach.ms, dropMs: drop.ms });
  }
  const totalB = round(now() - startB);
  const walDropB = await walSince(admin, walB);
  const loopSamplesB = await loopB.stop();
  const sizesAfterB = await tableSizes(admin, 'outbox_p');
  const deletedB = dropsB.reduce((sum, d) => sum + d.rows, 0);
  log(
    `retention B: ${int(deletedB)} rows in ${fmt(totalB, 0)} ms (${dropsB.length} partitions), WAL ${walDropB} MiB`,
  );
  return {
    method: 'per old day partition: guard (no unpublished row), DETACH PARTITION … CONCURRENTLY, DROP TABLE',
    rowsDeleted: deletedB,
    partitions: dropsB,
    totalMs: totalB,
    rowsPerSec: Math.round((deletedB / totalB) * 1000),
    walMiB: walDropB,
    sizesBefore: sizesBeforeB,
    sizesAfter: sizesAfterB,
    claimDuring: loopSummary(loopSamplesB, 'outbox_p'),
    baselineClaimDuring: loopSummary(loopSamplesB, 'outbox_ref'),
    claimDuringSamples: loopSamplesB,
  };
}

// ---- Lock impact of the partition DDL behind a long transaction -------------------------
// A reader holds an ACCESS SHARE lock on the parent for --blocker-ms (a report query, a long
// transaction). DROP TABLE of a partition needs ACCESS EXCLUSIVE on the parent: it waits, and
// every claim queues behind it. DETACH … CONCURRENTLY also waits, but lets claims through.
export async function lockDemo({ url, admin }: Connections) {
  const results: {
    method: string;
    ddlMs: number;
    claimsDuring: number;
    maxClaimMs: number;
    claimsOver100ms: number;
  }[] = [];
  for (const [i, method] of ['drop table', 'detach concurrently + drop table'].entries()) {
    const from = new Date(midnight.getTime() + (5 + i) * DAY);
    const name = `outbox_p_${dayName(from)}`;
    await admin.query(
      `create table ${name} partition of outbox_p for values from ('${from.toISOString()}') to ('${new Date(from.getTime() + DAY).toISOString()}')`,
    );
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from outbox_p limit 0');
      const loop = await startClaimLoop(url, [claimers.P]);
      const release = sleep(params.blockerMs).then(() => blocker.query('commit'));
      await sleep(100);
      const ddl = await timed(async () => {
        if (method === 'drop table') {
          await admin.query(`drop table ${name}`);
        } else {
          await admin.query(`alter table outbox_p detach partition ${name} concurrently`);
          await admin.query(`drop table ${name}`);
        }
      });
      await release;
      await sleep(200);
      const samples = await loop.stop();
      results.push({
        method,
        ddlMs: ddl.ms,
        claimsDuring: samples.length,
        maxClaimMs: round(Math.max(...samples.map((s) => s.ms))),
        claimsOver100ms: samples.filter((s) => s.ms > 100).length,
      });
    } finally {
      await blocker.end();
    }
  }
  log(
    `lock demo: ${results.map((d) => `${d.method}: ${d.ddlMs} ms, max claim ${d.maxClaimMs} ms`).join('; ')}`,
  );
  return results;
}
