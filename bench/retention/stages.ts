/** The claim at scale (the real table grown stage by stage) and the partitioned copy of it. */
import type pg from 'pg';
import { type ClaimPhase, measureClaims, vacuumForClaims } from './claims.ts';
import { DAY, dataStart, log, midnight, PENDING_SEQ_BASE, params } from './params.ts';
import { explainClaim, type Plan } from './plans.ts';
import {
  createIndexes,
  dayName,
  dropIndexes,
  indexDefinitions,
  insertPendingSql,
  insertPublishedSql,
  type Sizes,
  tableSizes,
} from './tables.ts';
import { fmt, int, timed } from './timing.ts';

export type Stage = {
  published: number;
  loadMs: number;
  indexMs: number;
  vacuumAnalyzeMs: number;
  sizes: Sizes;
  claims: ClaimPhase;
  plan: Plan;
};

/**
 * Grow the real outbox stage by stage and measure the claim at each size against outbox_ref (the
 * same pending rows, 0 published), which the first stage creates.
 */
export async function claimAtScale(admin: pg.Client, claimClient: pg.Client): Promise<Stage[]> {
  const stages: Stage[] = [];
  const migrationIndexes = await indexDefinitions(admin, 'outbox');
  // Loading without indexes and building them afterwards is about twice as fast as inserting
  // into the indexed table; the indexes are rebuilt from the migration's own definitions.
  await admin.query('alter table outbox disable trigger outbox_notify_after_insert');
  let loaded = 0;
  for (const target of params.stages) {
    log(`loading published rows ${int(loaded + 1)} .. ${int(target)}`);
    await dropIndexes(admin, 'outbox', migrationIndexes);
    const load = await timed(() =>
      admin.query(insertPublishedSql, [loaded, target, dataStart, midnight, params.published]),
    );
    if (loaded === 0) {
      await admin.query(insertPendingSql, [PENDING_SEQ_BASE, params.pending, params.aggregates]);
    }
    loaded = target;
    const index = await timed(() => createIndexes(admin, 'outbox', migrationIndexes));
    const vacuum = await timed(() => admin.query('vacuum analyze outbox'));
    const sizes = await tableSizes(admin, 'outbox');
    if (stages.length === 0) {
      // The baseline: the same pending rows and nothing else, same indexes (like … including all).
      await admin.query('create table outbox_ref (like outbox including all)');
      await admin.query(`insert into outbox_ref select * from outbox where status <> 'published'`);
      await admin.query('vacuum analyze outbox_ref');
    } else {
      await admin.query('vacuum outbox_ref');
    }
    await vacuumForClaims(admin, ['A', 'R']);
    const plan = await explainClaim(claimClient, 'outbox', `published=${target}`);
    const claims = await measureClaims(claimClient, admin, `published=${target}`, ['A', 'R']);
    stages.push({
      published: target,
      loadMs: load.ms,
      indexMs: index.ms,
      vacuumAnalyzeMs: vacuum.ms,
      sizes,
      claims,
      plan,
    });
    log(
      `stage ${int(target)}: load ${fmt(load.ms / 1000, 1)} s, indexes ${fmt(index.ms / 1000, 1)} s, ${sizes.totalMiB} MiB; plan ${plan.executionMs} ms: ${plan.scans.join('; ')}`,
    );
  }
  await admin.query(`select setval(pg_get_serial_sequence('outbox', 'seq'), (select max(seq) from outbox))`);
  await admin.query('alter table outbox enable trigger outbox_notify_after_insert');
  const finalIndexes = await indexDefinitions(admin, 'outbox');
  if (JSON.stringify(finalIndexes) !== JSON.stringify(migrationIndexes)) {
    throw new Error('rebuilt indexes differ from the migration');
  }
  return stages;
}

export type Partition = { name: string; from: Date; to: Date };

/** outbox_p: the same rows in a table partitioned by day on created_at. */
export async function buildPartitioned(
  admin: pg.Client,
): Promise<{ partitions: Partition[]; buildMs: number }> {
  log('building outbox_p (partitioned by day on created_at)');
  const partitions: Partition[] = [];
  for (let from = dataStart.getTime(); from <= midnight.getTime() + DAY; from += DAY) {
    partitions.push({
      name: `outbox_p_${dayName(new Date(from))}`,
      from: new Date(from),
      to: new Date(from + DAY),
    });
  }
  const buildP = await timed(async () => {
    await admin.query(
      'create table outbox_p (like outbox including defaults including constraints) partition by range (created_at)',
    );
    for (const p of partitions) {
      await admin.query(
        `create table ${p.name} partition of outbox_p for values from ('${p.from.toISOString()}') to ('${p.to.toISOString()}')`,
      );
    }
    await admin.query('insert into outbox_p select * from outbox');
    // A unique constraint on a partitioned table must contain the partition key.
    await admin.query('alter table outbox_p add constraint outbox_p_pkey primary key (id, created_at)');
    await admin.query('alter table outbox_p add constraint outbox_p_seq_key unique (seq, created_at)');
    await admin.query(
      `create index outbox_p_claimable_idx on outbox_p (seq) where status in ('pending', 'in_flight')`,
    );
    await admin.query(
      `create index outbox_p_aggregate_idx on outbox_p (aggregate_type, aggregate_id, seq) where status <> 'published'`,
    );
    await admin.query(
      `create index outbox_p_published_at_idx on outbox_p (published_at) where status = 'published'`,
    );
    // A statement trigger on the parent fires once per INSERT statement, whichever partition.
    await admin.query(
      'create trigger outbox_p_notify_after_insert after insert on outbox_p for each statement execute function outbox_notify()',
    );
    await admin.query('vacuum analyze outbox_p');
  });
  log(`outbox_p: ${partitions.length} partitions, built in ${fmt(buildP.ms / 1000, 1)} s`);
  return { partitions, buildMs: buildP.ms };
}
