import { claimBatch } from '@outbox/outbox';
import { toError } from '@outbox/runtime/errors';
import { type Claimed, holdLeases, type OutcomeDeps } from './batchOutcomes.ts';

/**
 * The claim step: up to `limit` due events leased to this relay (claimSql.ts says which, and how
 * each aggregate keeps its order), their leases held from here until each has its outcome. A
 * database failure resolves to the backoff instead.
 */
export async function claimRows(
  deps: OutcomeDeps,
  limit: number,
  /** The ids of the batch the relay is delivering; the claim may extend their aggregates' runs. */
  inHand: string[],
): Promise<Claimed | { retryInMs: number }> {
  const claimTimer = deps.metrics.stepDuration.startTimer({ step: 'claim' });
  let claimed: Claimed['rows'];
  try {
    claimed = await claimBatch(deps.pool, deps.owner, deps.leaseMs, limit, inHand);
  } catch (err) {
    return { retryInMs: deps.health.degraded('claim', toError(err)) };
  } finally {
    claimTimer();
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
