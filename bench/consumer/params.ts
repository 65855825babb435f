/** bench:consumer's flags, checked before any set-up, and the variants they select. */
import { pino } from 'pino';
import { defineBench, int, list } from '../support/bench.ts';

export const bench = defineBench({
  name: 'consumer-throughput',
  about: 'Consumer throughput: the production loop against bare kafkajs and transaction sizes, interleaved.',
  options: {
    runs: int(1, 'runs, each on a fresh database and topic'),
    rounds: int(3, 'rounds per run; each runs every variant once, in a rotating order'),
    events: int(10000, 'events each variant consumes per round'),
    partitions: int(6, "the topic's partitions"),
    variants: list('A,V,P,P1,C100,D', 'the variants (A, the baseline, among them)'),
    warmup: int(1000, 'events per variant before the first round'),
  },
});

const { runs, rounds, events, partitions, variants: keys, warmup } = bench.args;
export const params = {
  runs,
  rounds,
  events,
  partitions,
  variants: keys,
  warmup,
  aggregates: 2000,
  poolSize: 4,
};
export const log = bench.log;
export const quietLogger = pino({ level: 'error' }, pino.destination(2));
export type Variant = {
  key: string;
  label: string;
  /** Messages per transaction: 1, a cap, or the whole batch kafkajs fetched (0). */
  txSize?: number;
};

export const allVariants: Variant[] = [
  { key: 'A', label: 'bare kafkajs consumer, eachMessage, no work' },
  { key: 'V', label: 'runConsumer (eachBatch, decode + zod), chunk handler does nothing' },
  { key: 'P', label: 'production loop (startEventConsumer), chunks of ≤ 200 in 1 transaction', txSize: 200 },
  { key: 'P1', label: 'production loop, 1 event per transaction (maxChunk 1)', txSize: 1 },
  { key: 'C10', label: 'eachBatch, 1 transaction per 10 messages', txSize: 10 },
  { key: 'C100', label: 'eachBatch, 1 transaction per 100 messages', txSize: 100 },
  { key: 'C', label: 'eachBatch, 1 transaction per fetched batch', txSize: 0 },
  { key: 'D', label: 'C, and the effects as one set-based INSERT', txSize: 0 },
  { key: 'I', label: "inventory's consumer: startEventConsumer + its handlers (reserveStocks)" },
  { key: 'B', label: "billing's consumer: startEventConsumer + billingHandlers (provider: no latency)" },
];
export const variants = params.variants.map((key) => {
  const variant = allVariants.find((v) => v.key === key);
  if (!variant) throw new Error(`unknown variant ${key}; known: ${allVariants.map((v) => v.key).join(',')}`);
  return variant;
});
if (!variants.some((v) => v.key === 'A')) throw new Error('--variants must include A (the baseline)');
