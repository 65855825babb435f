/** bench:retention's flags, checked before any set-up, and the days the generated data spans. */
import { parseArgs } from 'node:util';
import { positiveInt } from '../support/args.ts';
import { logger } from '../support/environment.ts';
import { resultsPath } from '../support/results.ts';

export const { values: args } = parseArgs({
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
    out: { type: 'string', default: resultsPath('retention') },
  },
});

export const published = positiveInt('published', args.published);
export const params = {
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
  /** Claim batch size; the relay's default RELAY_BATCH_SIZE is 1000. */
  claimLimit: positiveInt('limit', args.limit),
  /** Pause between two claims of the background claim loop that runs during retention. */
  loopIntervalMs: positiveInt('loop-interval', args['loop-interval']),
  /** How long the blocking transaction of the lock demonstration holds its lock. */
  blockerMs: positiveInt('blocker-ms', args['blocker-ms']),
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
export const log = logger('retention');
