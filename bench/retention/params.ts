/** bench:retention's flags, checked before any set-up, and the days the generated data spans. */
import { as, defineBench, int, ints } from '../support/bench.ts';

export const bench = defineBench({
  name: 'retention',
  about:
    'How to remove published events from a large outbox (batched deletes or dropped day partitions), ' +
    'and whether the claim stays fast beside millions of published rows.',
  options: {
    published: int(2000000, 'published rows at the last stage (retention runs on this size)'),
    stages: ints(
      '100000,1000000',
      'published-row counts at which the claim is measured (--published is the last)',
    ),
    pending: int(5000, 'pending rows'),
    aggregates: int(1000, 'aggregates the pending rows are spread over'),
    days: int(10, 'days the published rows span'),
    retentionDays: int(7, 'days kept (below --days)'),
    /** deletePublished batch size; the relay uses 1000. */
    batch: int(1000, "deletePublished's batch size (the relay uses 1000)"),
    rounds: int(5, 'claim rounds per phase'),
    claimsPerRound: as('claims', int(40, 'claims per table per round')),
    /** Claim batch size; the relay's default RELAY_BATCH_SIZE is 1000. */
    claimLimit: as('limit', int(100, "the claim's batch size")),
    /** Pause between two claims of the background claim loop that runs during retention. */
    loopIntervalMs: as(
      'loop-interval',
      int(20, 'ms between two claims of the claim loop that runs during retention'),
    ),
    /** How long the blocking transaction of the lock demonstration holds its lock. */
    blockerMs: int(1000, 'how long the blocking transaction of the lock demonstration holds its lock'),
  },
});
const { published } = bench.args;

export const params = {
  ...bench.parameters,
  /** Published-row counts at which the claim is measured; `published` is always the last one. */
  stages: [...new Set([...bench.args.stages, published])].filter((s) => s <= published).sort((a, b) => a - b),
  leaseMs: 30_000,
};
if (params.retentionDays >= params.days) throw new Error('--retention-days must be below --days');
export const DAY = 86_400_000;
export const midnight = new Date(Math.floor(Date.now() / DAY) * DAY); // today 00:00 UTC
/** Published rows are spread evenly over [dataStart, midnight); pending rows are created "now". */
export const dataStart = new Date(midnight.getTime() - params.days * DAY);
/** Retention boundary for both variants: the start of the first day that is kept. */
export const cutoff = new Date(midnight.getTime() - params.retentionDays * DAY);
export const PENDING_SEQ_BASE = 1_000_000_000_000; // pending rows come after every published row
export const log = bench.log;
