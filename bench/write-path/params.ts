/** bench:write-path's flags, checked before any set-up. */
import { parseArgs } from 'node:util';
import { positiveInt } from '../support/args.ts';
import { logger } from '../support/environment.ts';
import { resultsPath } from '../support/results.ts';

export const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '15' },
    iterations: { type: 'string', default: '150' },
    tx: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '8,32' },
    warmup: { type: 'string', default: '100' },
    variants: { type: 'string', default: 'A,R,B,C,D,E0,E1,E1K,F0,F1,F1K,F1N,F1T' },
    out: { type: 'string', default: resultsPath('write-path') },
  },
});

export const params = {
  runs: positiveInt('runs', args.runs),
  rounds: positiveInt('rounds', args.rounds),
  /** Transactions per variant per round at concurrency 1 (latency). */
  iterations: positiveInt('iterations', args.iterations),
  /** Transactions per variant per round at each higher concurrency (throughput). */
  txPerThroughputRound: positiveInt('tx', args.tx),
  concurrency: args.concurrency.split(',').map((c) => positiveInt('concurrency', c)),
  warmup: positiveInt('warmup', args.warmup),
  variants: args.variants.split(','),
  prismaPoolSize: 10, // createPrisma passes no `max`, so node-postgres' default pool of 10 applies
};
export const log = logger('write-path');
