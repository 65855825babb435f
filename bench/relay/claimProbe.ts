/** The claim statement alone: production's against the form it replaced, stale vs fresh statistics. */
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { claimBatch, markPublished } from '@outbox/outbox';
import { rotated, round } from '../support/stats.ts';
import { insertEventsSql, insertHistorySql } from './backlog.ts';
import { log, params } from './params.ts';
import { connect } from './relays.ts';
import type { StatsState } from './throughputVariants.ts';

/**
 * The claim as it was before this benchmark: "no earlier unpublished event of this aggregate" as
 * NOT EXISTS. The same rows qualify as with production's `seq = (select min(seq) ...)`, but NOT
 * EXISTS becomes an anti-join whose inner side the planner may scan whole when its statistics
 * predate the backlog. Kept here, benchmark only, so the comparison can be rerun. (Results
 * recorded before the switch call production "rewrite" and this form "production".)
 */
export const notExistsClaimKeptForComparisonSql = `
  with claimable as (
    select o.id, o.status as previous_status
      from outbox o
     where ((o.status = 'pending' and o.next_attempt_at <= now())
         or (o.status = 'in_flight' and o.lease_expires_at < now()))
       and not exists (
             select 1
               from outbox earlier
              where earlier.aggregate_type = o.aggregate_type
                and earlier.aggregate_id = o.aggregate_id
                and earlier.seq < o.seq
                and earlier.status <> 'published')
     order by o.seq
     limit $3
       for update of o skip locked)
  update outbox o
     set status = 'in_flight',
         lease_owner = $1,
         lease_expires_at = now() + make_interval(secs => $2::int / 1000.0),
         attempts = o.attempts + 1
    from claimable
   where o.id = claimable.id
  returning o.id`;

export type ClaimProbeCell = { query: 'production' | 'not-exists'; stats: StatsState };
export type ClaimProbeRound = ClaimProbeCell & {
  round: number;
  events: number;
  claims: number;
  totalMs: number;
  eventsPerSec: number;
  meanClaimMs: number;
  maxClaimMs: number;
};

/** Drain a backlog with claim + markPublished from one connection, no Kafka: the database's share. */
export async function claimProbe(run: number): Promise<ClaimProbeRound[]> {
  const db = await createOutboxDatabase('bench_claim_probe');
  const admin = await connect(db.url);
  const cells: ClaimProbeCell[] = [
    { query: 'production', stats: 'fresh' },
    { query: 'production', stats: 'stale' },
    { query: 'not-exists', stats: 'fresh' },
    { query: 'not-exists', stats: 'stale' },
  ];
  const results: ClaimProbeRound[] = [];
  try {
    const owner = 'bench-claim-probe';
    for (let r = -1; r < params.rounds; r++) {
      const events = r < 0 ? params.warmupEvents : params.claimProbeEvents;
      for (const cell of rotated(cells, Math.max(0, r))) {
        await admin.query('truncate outbox');
        if (params.history > 0) await admin.query(insertHistorySql, [params.history]);
        await admin.query('analyze outbox');
        await admin.query('begin');
        await admin.query(insertEventsSql(), [events, params.aggregates, 0, 'agg']);
        if (cell.stats === 'fresh') await admin.query('analyze outbox');
        await admin.query('commit');
        const claimTimes: number[] = [];
        const start = performance.now();
        for (;;) {
          const claimStart = performance.now();
          const ids =
            cell.query === 'production'
              ? (await claimBatch(admin, owner, 30_000, params.batchSize)).map((row) => row.id)
              : (
                  await admin.query<{ id: string }>(notExistsClaimKeptForComparisonSql, [
                    owner,
                    30_000,
                    params.batchSize,
                  ])
                ).rows.map((row) => row.id);
          claimTimes.push(performance.now() - claimStart);
          if (ids.length === 0) break;
          await markPublished(admin, ids, owner);
        }
        const totalMs = performance.now() - start;
        const { rows } = await admin.query<{ n: number }>(
          `select count(*)::int as n from outbox where status <> 'published'`,
        );
        if (rows[0]?.n !== 0)
          throw new Error(`claim probe ${cell.query}/${cell.stats}: rows left unpublished`);
        if (r < 0) continue;
        results.push({
          ...cell,
          round: r,
          events,
          claims: claimTimes.length,
          totalMs: round(totalMs, 1),
          eventsPerSec: round((events / totalMs) * 1000, 1),
          meanClaimMs: round(claimTimes.reduce((a, b) => a + b, 0) / claimTimes.length, 2),
          maxClaimMs: round(Math.max(...claimTimes), 2),
        });
      }
      if (r >= 0)
        log(
          `run ${run}: claim probe round ${r + 1}/${params.rounds}: ${results
            .filter((x) => x.round === r)
            .map((x) => `${x.query}/${x.stats} ${x.eventsPerSec.toFixed(0)}/s`)
            .join(', ')}`,
        );
    }
    return results;
  } finally {
    await admin.end().catch(() => {});
    await db.drop();
  }
}
