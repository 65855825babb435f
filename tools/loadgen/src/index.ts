// The load generator as a library (the CLI is src/cli.ts): send a mix of orders with runLoad,
// follow them to their end with collectOutcome, print them with formatSummary.
export { scrapeDuplicates } from './duplicateMetrics.ts';
export { parseDuration } from './duration.ts';
export type { OrderMix } from './orderMix.ts';
export { collectOutcome, type Outcome } from './outcome.ts';
export type { LatencySummary } from './percentiles.ts';
export { type LoadResult, runLoad } from './runLoad.ts';
export type { RetryPolicy } from './sendOrder.ts';
export { formatSummary } from './summary.ts';
