/** bench:consumer's flags, checked before any set-up, and the variants they select. */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { positiveInt } from '../support/args.ts';
import { logger } from '../support/environment.ts';
import { resultsPath } from '../support/results.ts';

export const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '10000' },
    partitions: { type: 'string', default: '6' },
    variants: { type: 'string', default: 'A,V,P,P1,C100,D' },
    warmup: { type: 'string', default: '1000' },
    out: { type: 'string', default: resultsPath('consumer-throughput') },
  },
});

export const params = {
  runs: positiveInt('runs', args.runs),
  rounds: positiveInt('rounds', args.rounds),
  events: positiveInt('events', args.events),
  partitions: positiveInt('partitions', args.partitions),
  variants: args.variants.split(','),
  warmup: positiveInt('warmup', args.warmup),
  aggregates: 2000,
  poolSize: 4,
};

export const log = logger('consumer-throughput');
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
