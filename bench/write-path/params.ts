/** bench:write-path's flags, checked before any set-up. */
import { as, defineBench, int, ints, list } from '../support/bench.ts';

export const bench = defineBench({
  name: 'write-path',
  about: 'What the outbox write adds to the orders business transaction, variant by variant, interleaved.',
  options: {
    runs: int(1, 'runs, each on a fresh database'),
    rounds: int(15, 'rounds per run; each runs every variant once, in a rotating order'),
    iterations: int(150, 'transactions per variant per round at concurrency 1 (latency)'),
    txPerThroughputRound: as(
      'tx',
      int(400, 'transactions per variant per round at each higher concurrency (throughput)'),
    ),
    concurrency: ints('8,32', 'the concurrencies measured for throughput'),
    warmup: int(100, 'transactions per variant before the first round'),
    variants: list('A,R,B,C,D,E0,E1,E1K,F0,F1,F1K,F1N,F1T', 'the variants (bench/write-path/variants.ts)'),
  },
});
export const params = {
  ...bench.parameters,
  prismaPoolSize: 10, // createPrisma passes no `max`, so node-postgres' default pool of 10 applies
};
export const log = bench.log;
