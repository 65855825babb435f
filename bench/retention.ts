/**
 * Retention benchmark: how to remove published events from a large outbox, and whether the claim
 * query stays fast when the table holds millions of published rows.
 *
 *   node bench/retention.ts [--published 2000000] [--stages 100000,1000000] [--pending 5000]
 *                           [--aggregates 1000] [--days 10] [--retention-days 7] [--batch 1000]
 *                           [--rounds 5] [--claims 40] [--limit 100] [--loop-interval 20]
 *                           [--blocker-ms 1000] [--out bench/results/retention]
 *
 * One fresh database (createOutboxDatabase: the real shared migrations) holds three tables:
 *   outbox      the real table. Published rows are loaded in stages (100k, 1M, 2M by default),
 *               spread evenly over `--days` days, plus `--pending` pending rows over `--aggregates`
 *               aggregates. Retention A runs on it: the real deletePublished, batch after batch,
 *               exactly like apps/relay/src/retention.ts.
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
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { claimBatch, deletePublished, outboxSql } from '@outbox/outbox';
import pg from 'pg';
import { positiveInt } from './support/args.ts';
import { loadavg, machineInfo, postgresInfo } from './support/environment.ts';

// ---------------------------------------------------------------------------------------------
// Parameters

const { values: args } = parseArgs({
  options: {
    published: { type: 'string', default: '2000000' },
    stages: { type: 'string', default: '100000,1000000' },
    pending: { type: 'string', default: '5000' },
    aggregates: { type: 'string', default: '1000' },
    days: { type: 'string', default: '10' },
    'retention-days': { type: 'string', default: '7' },
    batch: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
    claims: { type: 'string', default: '40' },
    limit: { type: 'string', default: '100' },
    'loop-interval': { type: 'string', default: '20' },
    'blocker-ms': { type: 'string', default: '1000' },
    out: { type: 'string', default: 'bench/results/retention' },
  },
});

const published = positiveInt('published', args.published);
const params = {
  /** Published rows at the last stage (retention runs on this size). */
  published,
  /** Published-row counts at which the claim is measured; `published` is always the last one. */
  stages: [...new Set([...args.stages.split(',').map((s) => positiveInt('stages', s)), published])]
    .filter((s) => s <= published)
    .sort((a, b) => a - b),
  pending: positiveInt('pending', args.pending),
  aggregates: positiveInt('aggregates', args.aggregates),
  days: positiveInt('days', args.days),
  retentionDays: positiveInt('retention-days', args['retention-days']),
  /** deletePublished batch size; the relay uses 1000. */
  batch: positiveInt('batch', args.batch),
  rounds: positiveInt('rounds', args.rounds),
  /** Claims per table per round. */
  claimsPerRound: positiveInt('claims', args.claims),
  /** Claim batch size; the relay's default RELAY_BATCH_SIZE is 100. */
  claimLimit: positiveInt('limit', args.limit),
  /** Pause between two claims of the background claim loop that runs during retention. */
  loopIntervalMs: positiveInt('loop-interval', args['loop-interval']),
  /** How long the blocking transaction of the lock demonstration holds its lock. */
  blockerMs: positiveInt('blocker-ms', args['blocker-ms']),
  leaseMs: 30_000,
};
if (params.retentionDays >= params.days) throw new Error('--retention-days must be below --days');

// ---------------------------------------------------------------------------------------------
// Statistics and small helpers

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number; // nearest rank
}
const median = (xs: number[]) => quantile(xs, 0.5);
const round = (x: number, digits = 3) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const mib = (bytes: number) => round(bytes / 2 ** 20, 1);
const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
const int = (x: number) => Math.round(x).toLocaleString('en-US');

function log(message: string) {
  process.stderr.write(`[retention] ${message}\n`);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = now();
  const value = await fn();
  return { ms: round(now() - start), value };
}

// ---------------------------------------------------------------------------------------------
// The claim statement, exactly as claimBatch sends it (captured, not copied), for other tables.

const claimSql = outboxSql.claim;
const claimSqlOn = (table: string) => claimSql.replace(/\boutbox\b/g, table);
const claimParams = () => ['bench-relay', params.leaseMs, params.claimLimit];

type Claimer = { table: string; label: string; run(client: pg.ClientBase): Promise<number> };
const claimers: Record<'A' | 'P' | 'R', Claimer> = {
  A: {
    table: 'outbox',
    label: 'outbox (real table, real claimBatch)',
    run: async (client) =>
      (await claimBatch(client, 'bench-relay', params.leaseMs, params.claimLimit)).length,
  },
  P: {
    table: 'outbox_p',
    label: 'outbox_p (partitioned by day)',
    run: async (client) => (await client.query(claimSqlOn('outbox_p'), claimParams())).rowCount ?? 0,
  },
  R: {
    table: 'outbox_ref',
    label: 'outbox_ref (pending rows only, 0 published)',
    run: async (client) => (await client.query(claimSqlOn('outbox_ref'), claimParams())).rowCount ?? 0,
  },
};

/** One claim inside BEGIN … ROLLBACK: latency of the claim statement alone. */
async function claimOnce(client: pg.ClientBase, claimer: Claimer): Promise<{ ms: number; rows: number }> {
  await client.query('begin');
  try {
    const start = now();
    const rows = await claimer.run(client);
    return { ms: now() - start, rows };
  } finally {
    await client.query('rollback');
  }
}

type ClaimSummary = {
  n: number;
  /** Median of the per-round medians. */
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  rowsPerClaim: number;
  /** Per round: this table's median ÷ outbox_ref's median in the same round, then the median. */
  vsRef?: number;
};
type ClaimPhase = {
  phase: string;
  loadavg: number[];
  samples: Record<string, number[][]>;
  summary: Record<string, ClaimSummary>;
};

/**
 * Every claim rolled back leaves a dead version of each row it leased, in the heap and in every
 * index (changing `status` rules out HOT updates), and every claim leases the same first rows.
 * Vacuuming with index cleanup before each round keeps that debris from piling up across rounds.
 */
async function vacuumForClaims(admin: pg.ClientBase, keys: ('A' | 'P' | 'R')[]) {
  await admin.query(`vacuum (index_cleanup on) ${keys.map((k) => claimers[k].table).join(', ')}`);
}

/** Interleaved rounds: every round claims on every table, in an order that rotates. */
async function measureClaims(
  client: pg.ClientBase,
  admin: pg.ClientBase,
  phase: string,
  keys: ('A' | 'P' | 'R')[],
) {
  for (const key of keys) await claimOnce(client, claimers[key]); // warm-up (plan cache, buffers)
  const samples: Record<string, number[][]> = Object.fromEntries(keys.map((k) => [k, []]));
  const rows: Record<string, number[]> = Object.fromEntries(keys.map((k) => [k, []]));
  for (let r = 0; r < params.rounds; r++) {
    await vacuumForClaims(admin, keys);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(i + r) % keys.length] as 'A' | 'P' | 'R';
      const roundSamples: number[] = [];
      for (let c = 0; c < params.claimsPerRound; c++) {
        const result = await claimOnce(client, claimers[key]);
        roundSamples.push(round(result.ms));
        rows[key]?.push(result.rows);
      }
      samples[key]?.push(roundSamples);
    }
  }
  const summary: Record<string, ClaimSummary> = {};
  for (const key of keys) {
    const perRound = samples[key] ?? [];
    const all = perRound.flat();
    summary[key] = {
      n: all.length,
      medianMs: round(median(perRound.map(median))),
      p99Ms: round(quantile(all, 0.99)),
      maxMs: round(Math.max(...all)),
      rowsPerClaim: median(rows[key] ?? []),
    };
    const ref = samples.R;
    if (key !== 'R' && ref) {
      (summary[key] as ClaimSummary).vsRef = round(
        median(perRound.map((s, r) => median(s) / median(ref[r] ?? []))),
      );
    }
  }
  const result: ClaimPhase = { phase, loadavg: loadavg(), samples, summary };
  const line = keys.map((k) => `${k} ${fmt(summary[k]?.medianMs ?? Number.NaN)} ms`).join(', ');
  log(`claim ${phase}: median ${line}`);
  return result;
}

type Plan = {
  table: string;
  phase: string;
  text: string;
  /** Planning and execution time of the execution shown in `text`. */
  planningMs: number;
  executionMs: number;
  scans: string[];
};

function scanNodes(node: Record<string, unknown>, out: string[] = []): string[] {
  const type = String(node['Node Type']);
  if (/Scan/.test(type)) {
    const relation = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
    const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
    // One entry per kind of scan: partitions (outbox_p_20261112, …) fold into outbox_p_<day>.
    out.push(`${type}${index}${relation}`.replaceAll(/_\d{8}/g, '_<day>'));
  }
  for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) scanNodes(child, out);
  return out;
}

const planTime = (text: string, what: string) =>
  round(Number(new RegExp(`${what} Time: ([\\d.]+) ms`).exec(text)?.[1] ?? Number.NaN));

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the claim, in a rolled-back transaction; then once more in JSON
 * (also rolled back) to list the scans it uses.
 */
async function explainClaim(client: pg.ClientBase, table: string, phase: string): Promise<Plan> {
  const sql = claimSqlOn(table);
  await client.query('begin');
  try {
    const text = await client.query(`explain (analyze, buffers) ${sql}`, claimParams());
    const plan = text.rows.map((row) => String(row['QUERY PLAN'])).join('\n');
    await client.query('rollback');
    await client.query('begin');
    const json = await client.query(`explain (analyze, buffers, format json) ${sql}`, claimParams());
    const explained = (json.rows[0]?.['QUERY PLAN'] ?? []) as Record<string, unknown>[];
    const root = explained[0] ?? {};
    return {
      table,
      phase,
      text: plan,
      planningMs: planTime(plan, 'Planning'),
      executionMs: planTime(plan, 'Execution'),
      scans: [...new Set(scanNodes(root.Plan as Record<string, unknown>))],
    };
  } finally {
    await client.query('rollback');
  }
}

type LoopSample = { table: string; atMs: number; ms: number };

/**
 * A claim every `loop-interval` ms on its own connection while something else runs, alternating
 * between the given tables (the table under test and the 0-published baseline, which shows how
 * much of a slowdown is just the machine being busy).
 */
async function startClaimLoop(url: string, loopClaimers: Claimer[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const origin = now();
  const samples: LoopSample[] = [];
  let stopped = false;
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      const claimer = loopClaimers[i % loopClaimers.length] as Claimer;
      const at = now() - origin;
      const { ms } = await claimOnce(client, claimer);
      samples.push({ table: claimer.table, atMs: round(at, 1), ms: round(ms) });
      await sleep(params.loopIntervalMs);
    }
  })();
  return {
    origin,
    async stop() {
      stopped = true;
      try {
        await done;
      } finally {
        await client.end();
      }
      return samples;
    },
  };
}

type LoopSummary = { n: number; medianMs: number; p99Ms: number; maxMs: number };
const loopSummary = (samples: LoopSample[], table: string): LoopSummary => {
  const ms = samples.filter((s) => s.table === table).map((s) => s.ms);
  return {
    n: ms.length,
    medianMs: round(median(ms)),
    p99Ms: round(quantile(ms, 0.99)),
    maxMs: round(Math.max(...ms)),
  };
};

// ---------------------------------------------------------------------------------------------
// Data

const DAY = 86_400_000;
const midnight = new Date(Math.floor(Date.now() / DAY) * DAY); // today 00:00 UTC
/** Published rows are spread evenly over [dataStart, midnight); pending rows are created "now". */
const dataStart = new Date(midnight.getTime() - params.days * DAY);
/** Retention boundary for both variants: the start of the first day that is kept. */
const cutoff = new Date(midnight.getTime() - params.retentionDays * DAY);
const PENDING_SEQ_BASE = 1_000_000_000_000; // pending rows come after every published row

const payloadSql = (orderExpr: string) => `jsonb_build_object(
    'orderId', ${orderExpr}, 'customerId', 'customer-' || (n % 997)::text, 'currency', 'EUR',
    'totalCents', '1999',
    'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1, 'unitPriceCents', '1999')))`;

/** Published rows n = from+1 .. to: four events per order, created in seq order, published 50 ms later. */
const insertPublishedSql = `
  insert into outbox (id, seq, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                      status, attempts, next_attempt_at, created_at, published_at)
  select gen_random_uuid(), n, '/orders', 'order', 'order-' || (n / 4)::text, 'ORDER_CREATED', 1,
         ${payloadSql(`'order-' || (n / 4)::text`)},
         'published', 1, t, t, t + interval '50 milliseconds'
    from (select n, $3::timestamptz + (n - 1) * ($4::timestamptz - $3::timestamptz) / $5::bigint as t
            from generate_series($1::bigint + 1, $2::bigint) as n) as s`;

/** Pending rows, round-robin over the aggregates (so each aggregate has several queued events). */
const insertPendingSql = `
  insert into outbox (id, seq, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
  select gen_random_uuid(), $1::bigint + n, '/orders', 'order', 'pending-order-' || (n % $3::int)::text,
         'ORDER_CREATED', 1, ${payloadSql(`'pending-order-' || (n % $3::int)::text`)}
    from generate_series(1, $2::int) as n`;

type IndexDefs = { constraints: { name: string; def: string }[]; indexes: { name: string; def: string }[] };

/** The table's primary key, unique constraints and other indexes, exactly as the migration made them. */
async function indexDefinitions(client: pg.ClientBase, table: string): Promise<IndexDefs> {
  const constraints = await client.query<{ name: string; def: string }>(
    `select conname as name, pg_get_constraintdef(oid) as def
       from pg_constraint where conrelid = $1::regclass and contype in ('p', 'u') order by conname`,
    [table],
  );
  const indexes = await client.query<{ name: string; def: string }>(
    `select i.relname as name, pg_get_indexdef(i.oid) as def
       from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = $1::regclass
        and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)
      order by i.relname`,
    [table],
  );
  return { constraints: constraints.rows, indexes: indexes.rows };
}

async function dropIndexes(client: pg.ClientBase, table: string, defs: IndexDefs) {
  for (const c of defs.constraints) await client.query(`alter table ${table} drop constraint ${c.name}`);
  for (const i of defs.indexes) await client.query(`drop index ${i.name}`);
}

async function createIndexes(client: pg.ClientBase, table: string, defs: IndexDefs) {
  for (const c of defs.constraints)
    await client.query(`alter table ${table} add constraint ${c.name} ${c.def}`);
  for (const i of defs.indexes) await client.query(i.def);
}

type Sizes = { totalMiB: number; heapMiB: number; indexesMiB: number; rows: number; published: number };

async function tableSizes(client: pg.ClientBase, table: string): Promise<Sizes> {
  // A partitioned table has no storage of its own: sum over its leaves.
  const { rows } = await client.query(
    `select coalesce(sum(pg_total_relation_size(relid)), 0)::bigint as total,
            coalesce(sum(pg_relation_size(relid)), 0)::bigint as heap,
            coalesce(sum(pg_indexes_size(relid)), 0)::bigint as indexes
       from (select relid from pg_partition_tree($1::regclass) where isleaf
             union select $1::regclass) as leaves`,
    [table],
  );
  const counts = await client.query(
    `select count(*)::bigint as rows, count(*) filter (where status = 'published')::bigint as published
       from ${table}`,
  );
  const row = rows[0] as Record<string, string>;
  const count = counts.rows[0] as Record<string, string>;
  return {
    totalMiB: mib(Number(row.total)),
    heapMiB: mib(Number(row.heap)),
    indexesMiB: mib(Number(row.indexes)),
    rows: Number(count.rows),
    published: Number(count.published),
  };
}

async function walLsn(client: pg.ClientBase): Promise<string> {
  return String((await client.query('select pg_current_wal_lsn() as lsn')).rows[0]?.lsn);
}
async function walSince(client: pg.ClientBase, lsn: string): Promise<number> {
  const { rows } = await client.query('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint as bytes', [
    lsn,
  ]);
  return mib(Number(rows[0]?.bytes));
}

const dayName = (d: Date) => d.toISOString().slice(0, 10).replaceAll('-', '');

// ---------------------------------------------------------------------------------------------
// Main

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

const stages: {
  published: number;
  loadMs: number;
  indexMs: number;
  vacuumAnalyzeMs: number;
  sizes: Sizes;
  claims: ClaimPhase;
  plan: Plan;
}[] = [];
const plans: Plan[] = [];
const claimPhases: ClaimPhase[] = [];
let report: Record<string, unknown> = {};

try {
  await admin.connect();
  await claimClient.connect();
  await admin.query(`set maintenance_work_mem = '256MB'`);
  const migrationIndexes = await indexDefinitions(admin, 'outbox');

  // ---- Claim at scale: the real table, grown stage by stage ----------------------------------
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
    plans.push(plan);
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

  // ---- The partitioned copy -----------------------------------------------------------------
  log('building outbox_p (partitioned by day on created_at)');
  const partitions: { name: string; from: Date; to: Date }[] = [];
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

  // ---- Claim on the full tables, partitioned vs not ----------------------------------------
  await vacuumForClaims(admin, ['A', 'P', 'R']);
  plans.push(await explainClaim(claimClient, 'outbox_p', 'full size, before retention'));
  claimPhases.push(await measureClaims(claimClient, admin, 'full size, before retention', ['A', 'P', 'R']));

  // ---- Retention A: deletePublished in batches, like the relay ----------------------------
  log(`retention A: deletePublished(retention ${params.retentionDays} days, batch ${params.batch})`);
  const sizesBeforeA = await tableSizes(admin, 'outbox');
  const retentionMs = Date.now() - cutoff.getTime();
  await vacuumForClaims(admin, ['A', 'R']);
  const loopA = await startClaimLoop(db.url, [claimers.A, claimers.R]);
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

  // ---- Retention B: drop the old day partitions -------------------------------------------
  log('retention B: detach concurrently + drop of the old day partitions');
  const sizesBeforeB = await tableSizes(admin, 'outbox_p');
  const old = partitions.filter((p) => p.to.getTime() <= cutoff.getTime());
  const rowsIn = new Map<string, number>();
  for (const p of old) {
    rowsIn.set(p.name, Number((await admin.query(`select count(*) as n from ${p.name}`)).rows[0]?.n));
  }
  await vacuumForClaims(admin, ['P', 'R']);
  const loopB = await startClaimLoop(db.url, [claimers.P, claimers.R]);
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

  // ---- Lock impact of the partition DDL behind a long transaction -------------------------
  // A reader holds an ACCESS SHARE lock on the parent for --blocker-ms (a report query, a long
  // transaction). DROP TABLE of a partition needs ACCESS EXCLUSIVE on the parent: it waits, and
  // every claim queues behind it. DETACH … CONCURRENTLY also waits, but lets claims through.
  const lockDemo: {
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
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from outbox_p limit 0');
      const loop = await startClaimLoop(db.url, [claimers.P]);
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
      lockDemo.push({
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
    `lock demo: ${lockDemo.map((d) => `${d.method}: ${d.ddlMs} ms, max claim ${d.maxClaimMs} ms`).join('; ')}`,
  );

  // ---- Claim after retention ---------------------------------------------------------------
  await vacuumForClaims(admin, ['A', 'P', 'R']);
  plans.push(await explainClaim(claimClient, 'outbox', 'after retention (A vacuumed)'));
  plans.push(await explainClaim(claimClient, 'outbox_p', 'after retention'));
  claimPhases.push(await measureClaims(claimClient, admin, 'after retention (A vacuumed)', ['A', 'P', 'R']));

  const batchesSorted = sorted(batchesA);
  report = {
    benchmark: 'retention',
    date: new Date().toISOString(),
    durationSec: Math.round((Date.now() - startedAt) / 1000),
    machine: machineInfo(),
    node: process.version,
    postgres: await postgresInfo(testPostgresUrl, [
      'shared_buffers',
      'work_mem',
      'maintenance_work_mem',
      'max_wal_size',
      'checkpoint_timeout',
      'full_page_writes',
      'wal_compression',
      'synchronous_commit',
      'autovacuum',
    ]),
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
      buildPartitionedMs: buildP.ms,
    },
    claimAtScale: stages.map(({ plan: _plan, ...stage }) => stage),
    claimPhases,
    retention: {
      A: {
        method: `deletePublished(pool, retentionMs, ${params.batch}) until it returns < ${params.batch}`,
        rowsDeleted: deletedA,
        batches: batchesA.length,
        totalMs: totalA,
        rowsPerSec: Math.round((deletedA / totalA) * 1000),
        batchMs: {
          median: round(median(batchesA)),
          p99: round(quantile(batchesA, 0.99)),
          max: round(batchesSorted.at(-1) ?? Number.NaN),
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
      },
      B: {
        method:
          'per old day partition: guard (no unpublished row), DETACH PARTITION … CONCURRENTLY, DROP TABLE',
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
      },
      lockDemo,
    },
    plans,
  };
} finally {
  await pool.end();
  await claimClient.end();
  await admin.end();
  await db.drop();
}

// ---------------------------------------------------------------------------------------------
// Report

type Retention = {
  A: {
    rowsDeleted: number;
    batches: number;
    totalMs: number;
    rowsPerSec: number;
    batchMs: { median: number; p99: number; max: number };
    walMiB: number;
    vacuumMs: number;
    vacuumWalMiB: number;
    sizesBefore: Sizes;
    sizesAfter: Sizes;
    sizesAfterVacuum: Sizes;
    claimDuring: LoopSummary;
    baselineClaimDuring: LoopSummary;
  };
  B: {
    rowsDeleted: number;
    partitions: { partition: string; rows: number; guardMs: number; detachMs: number; dropMs: number }[];
    totalMs: number;
    rowsPerSec: number;
    walMiB: number;
    sizesBefore: Sizes;
    sizesAfter: Sizes;
    claimDuring: LoopSummary;
    baselineClaimDuring: LoopSummary;
  };
  lockDemo: {
    method: string;
    ddlMs: number;
    claimsDuring: number;
    maxClaimMs: number;
    claimsOver100ms: number;
  }[];
};

const loopCell = (s: LoopSummary) => `${fmt(s.medianMs)} / ${fmt(s.p99Ms)} / ${fmt(s.maxMs)} (${s.n})`;

function markdownReport(r: Record<string, unknown>): string {
  const machine = r.machine as Record<string, string | number>;
  const postgres = r.postgres as Record<string, string>;
  const retention = r.retention as Retention;
  const lines: string[] = [
    '# Retention and the claim query at scale',
    '',
    `${r.date} · ${machine.cpuModel} × ${machine.cpus} · Node ${r.node} · ${postgres.version} (shared_buffers=${postgres.shared_buffers}, max_wal_size=${postgres.max_wal_size}, autovacuum=${postgres.autovacuum}) · load average before ${(r.loadavgBefore as number[]).join(' ')}, after ${(r.loadavgAfter as number[]).join(' ')} · ${r.durationSec} s`,
    '',
    `Parameters: ${int(params.published)} published rows over ${params.days} days + ${int(params.pending)} pending rows over ${int(params.aggregates)} aggregates; retention ${params.retentionDays} days; deletePublished batch ${params.batch}; claim limit ${params.claimLimit}, ${params.rounds} rounds × ${params.claimsPerRound} claims per table, each in BEGIN … ROLLBACK.`,
    '',
    '## Claim latency vs published rows (real table)',
    '',
    '| published rows | table size MiB | claim median ms | claim p99 ms | 0-published baseline median ms | ratio vs baseline | EXPLAIN ANALYZE planning + execution ms | rows claimed |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const s of stages) {
    const a = s.claims.summary.A as ClaimSummary;
    const ref = s.claims.summary.R as ClaimSummary;
    lines.push(
      `| ${int(s.published)} | ${s.sizes.totalMiB} | ${fmt(a.medianMs)} | ${fmt(a.p99Ms)} | ${fmt(ref.medianMs)} | ${fmt(a.vsRef ?? Number.NaN)}× | ${fmt(s.plan.planningMs)} + ${fmt(s.plan.executionMs)} | ${a.rowsPerClaim} |`,
    );
  }
  lines.push(
    '',
    '## Claim latency, real table vs partitioned',
    '',
    '| phase | table | median ms | p99 ms | max ms | ratio vs baseline |',
    '|---|---|---|---|---|---|',
  );
  for (const phase of claimPhases) {
    for (const [key, s] of Object.entries(phase.summary)) {
      lines.push(
        `| ${phase.phase} | ${claimers[key as 'A' | 'P' | 'R'].label} | ${fmt(s.medianMs)} | ${fmt(s.p99Ms)} | ${fmt(s.maxMs)} | ${s.vsRef === undefined ? '—' : `${fmt(s.vsRef)}×`} |`,
      );
    }
  }
  const { A, B } = retention;
  lines.push(
    '',
    '## Retention',
    '',
    '| | A: deletePublished batches (relay) | B: drop day partitions |',
    '|---|---|---|',
    `| rows removed | ${int(A.rowsDeleted)} | ${int(B.rowsDeleted)} |`,
    `| statements | ${A.batches} deletes of ≤ ${params.batch} | ${B.partitions.length} × (guard, detach concurrently, drop) |`,
    `| total time | ${fmt(A.totalMs / 1000, 1)} s | ${fmt(B.totalMs / 1000, 2)} s |`,
    `| rows/s | ${int(A.rowsPerSec)} | ${int(B.rowsPerSec)} |`,
    `| longest statement | ${fmt(A.batchMs.max)} ms (batch median ${fmt(A.batchMs.median)}, p99 ${fmt(A.batchMs.p99)}) | detach ${fmt(Math.max(...B.partitions.map((p) => p.detachMs)))} ms, drop ${fmt(Math.max(...B.partitions.map((p) => p.dropMs)))} ms |`,
    `| WAL (cluster-wide LSN diff) | ${A.walMiB} MiB (+ ${A.vacuumWalMiB} MiB for VACUUM) | ${B.walMiB} MiB |`,
    `| size before → after | ${A.sizesBefore.totalMiB} → ${A.sizesAfter.totalMiB} MiB (after VACUUM ${A.sizesAfterVacuum.totalMiB} MiB) | ${B.sizesBefore.totalMiB} → ${B.sizesAfter.totalMiB} MiB |`,
    `| VACUUM afterwards | ${fmt(A.vacuumMs / 1000, 1)} s (space reusable, not returned to the OS) | not needed |`,
    `| claim on the table during retention (median / p99 / max ms, n) | ${loopCell(A.claimDuring)} | ${loopCell(B.claimDuring)} |`,
    `| claim on the 0-published baseline meanwhile (machine busy) | ${loopCell(A.baselineClaimDuring)} | ${loopCell(B.baselineClaimDuring)} |`,
    '',
    '| partition | rows | guard ms | detach concurrently ms | drop ms |',
    '|---|---|---|---|---|',
    ...B.partitions.map(
      (p) =>
        `| ${p.partition} | ${int(p.rows)} | ${fmt(p.guardMs)} | ${fmt(p.detachMs)} | ${fmt(p.dropMs)} |`,
    ),
    '',
    `### Partition DDL behind a transaction holding ACCESS SHARE on the parent for ${params.blockerMs} ms`,
    '',
    '| method | DDL ms | claims during | max claim ms | claims > 100 ms |',
    '|---|---|---|---|---|',
    ...retention.lockDemo.map(
      (d) =>
        `| ${d.method} | ${fmt(d.ddlMs)} | ${d.claimsDuring} | ${fmt(d.maxClaimMs)} | ${d.claimsOver100ms} |`,
    ),
    '',
    '## Plans (EXPLAIN (ANALYZE, BUFFERS), claim in a rolled-back transaction)',
    '',
  );
  for (const plan of plans) {
    lines.push(
      `### ${plan.table}, ${plan.phase}`,
      '',
      `Scans: ${plan.scans.join('; ')}.`,
      '',
      '```',
      plan.text,
      '```',
      '',
    );
  }
  return lines.join('\n');
}

const markdown = markdownReport(report);
mkdirSync(dirname(`${args.out}.json`), { recursive: true });
writeFileSync(`${args.out}.json`, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(`${args.out}.md`, markdown);
process.stdout.write(`\n${markdown}\n`);
log(`wrote ${args.out}.json and ${args.out}.md`);
