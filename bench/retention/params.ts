/** bench:retention's flags, checked before any set-up, and the days the generated data spans. */
import { defineBench, int, ints } from '../support/bench.ts';

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
    'retention-days': int(7, 'days kept (below --days)'),
    batch: int(1000, "deletePublished's batch size (the relay uses 1000)"),
    rounds: int(5, 'claim rounds per phase'),
    claims: int(40, 'claims per table per round'),
    limit: int(100, "the claim's batch size"),
    'loop-interval': int(20, 'ms between two claims of the claim loop that runs during retention'),
    'blocker-ms': int(1000, 'how long the blocking transaction of the lock demonstration holds its lock'),
  },
});
const { args } = bench;

export const params = {
  /** Published rows at the last stage (retention runs on this size). */
  published: args.published,
  /** Published-row counts at which the claim is measured; `published` is always the last one. */
  stages: [...new Set([...args.stages, args.published])]
    .filter((s) => s <= args.published)
    .sort((a, b) => a - b),
  pending: args.pending,
  aggregates: args.aggregates,
  days: args.days,
  retentionDays: args['retention-days'],
  /** deletePublished batch size; the relay uses 1000. */
  batch: args.batch,
  rounds: args.rounds,
  /** Claims per table per round. */
  claimsPerRound: args.claims,
  /** Claim batch size; the relay's default RELAY_BATCH_SIZE is 1000. */
  claimLimit: args.limit,
  /** Pause between two claims of the background claim loop that runs during retention. */
  loopIntervalMs: args['loop-interval'],
  /** How long the blocking transaction of the lock demonstration holds its lock. */
  blockerMs: args['blocker-ms'],
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
