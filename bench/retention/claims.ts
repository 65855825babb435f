/**
 * The claim on three tables: the real claimBatch on `outbox`, and on the partitioned copy and the
 * 0-published baseline the very same SQL (captured from claimBatch, not copied; only the table
 * name replaced). Every claim runs inside BEGIN … ROLLBACK, so nothing is consumed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { claimBatch, outboxSql } from '@outbox/outbox';
import pg from 'pg';
import { loadavg } from '../support/environment.ts';
import { quantile, round } from '../support/stats.ts';
import { log, params } from './params.ts';
import { fmt, nearestRankMedian as median, now } from './timing.ts';

export const claimSql = outboxSql.claim;
export const claimSqlOn = (table: string) => claimSql.replace(/\boutbox\b/g, table);
export const claimParams = () => ['bench-relay', params.leaseMs, params.claimLimit, []];

export type Claimer = { table: string; label: string; run(client: pg.ClientBase): Promise<number> };
export const claimers: Record<'A' | 'P' | 'R', Claimer> = {
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
export async function claimOnce(
  client: pg.ClientBase,
  claimer: Claimer,
): Promise<{ ms: number; rows: number }> {
  await client.query('begin');
  try {
    const start = now();
    const rows = await claimer.run(client);
    return { ms: now() - start, rows };
  } finally {
    await client.query('rollback');
  }
}

export type ClaimSummary = {
  n: number;
  /** Median of the per-round medians. */
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  rowsPerClaim: number;
  /** Per round: this table's median ÷ outbox_ref's median in the same round, then the median. */
  vsRef?: number;
};
export type ClaimPhase = {
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
export async function vacuumForClaims(admin: pg.ClientBase, keys: ('A' | 'P' | 'R')[]) {
  await admin.query(`vacuum (index_cleanup on) ${keys.map((k) => claimers[k].table).join(', ')}`);
}

/** Interleaved rounds: every round claims on every table, in an order that rotates. */
export async function measureClaims(
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
export type LoopSample = { table: string; atMs: number; ms: number };

/**
 * A claim every `loop-interval` ms on its own connection while something else runs, alternating
 * between the given tables (the table under test and the 0-published baseline, which shows how
 * much of a slowdown is just the machine being busy).
 */
export async function startClaimLoop(url: string, loopClaimers: Claimer[]) {
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

export type LoopSummary = { n: number; medianMs: number; p99Ms: number; maxMs: number };
export const loopSummary = (samples: LoopSample[], table: string): LoopSummary => {
  const ms = samples.filter((s) => s.table === table).map((s) => s.ms);
  return {
    n: ms.length,
    medianMs: round(median(ms)),
    p99Ms: round(quantile(ms, 0.99)),
    maxMs: round(Math.max(...ms)),
  };
};
