import { toError } from '@outbox/runtime/errors';
import { type Claimed, countMarked, holdLeases, type OutcomeDeps, type Unmarked } from './batchOutcomes.ts';

/**
 * The claim step: up to `limit` due events leased to this relay (claimSql.ts says which, and how
 * each aggregate keeps its order), their leases held from here until each has its outcome. With
 * `unmarked`, an acknowledged batch whose mark waited for this claim, the mark goes in the same
 * statement (markAndClaim), and that batch's leases end once it succeeded. A database failure
 * resolves to the backoff instead, and leaves `unmarked` unmarked and still leased.
 */
export async function claimRows(
  deps: OutcomeDeps,
  limit: number,
  /** The ids of the batch the relay is delivering; the claim may extend their aggregates' runs. */
  inHand: string[],
  unmarked?: Unmarked,
): Promise<Claimed | { retryInMs: number }> {
  let claimed: Claimed['rows'];
  try {
    if (unmarked) {
      const ids = unmarked.rows.map((row) => row.id);
      const result = await deps.store.markAndClaim(deps.owner, deps.leaseMs, limit, ids, inHand);
      unmarked.leases.release();
      countMarked(deps, unmarked.rows, result.marked, unmarked.ackedAt);
      deps.health.published(result.marked.size);
      claimed = result.rows;
    } else {
      claimed = await deps.store.claimBatch(deps.owner, deps.leaseMs, limit, inHand);
    }
  } catch (err) {
    return { retryInMs: deps.health.degraded('claim', toError(err)) };
  }
  const takeovers = claimed.filter((row) => row.lease_expired).length;
  if (takeovers > 0) {
    deps.metrics.leaseTakeovers.inc(takeovers);
    deps.logger.warn(
      { count: takeovers },
      'took over events whose lease expired; they may be published twice',
    );
  }
  return { rows: claimed, leases: holdLeases(deps, claimed) };
}
