// The load generator as a library (the CLI is src/cli.ts): send a mix of orders with runLoad,
// follow them to their end with collectOutcome, print them with formatSummary.
export { type DuplicateCounts, type MetricsUrls, scrapeDuplicates } from './duplicateMetrics.ts';
export { parseDuration } from './duration.ts';
export { DEFAULT_MIX, ORDER_KINDS, type OrderKind, type OrderMix } from './orderMix.ts';
export { collectOutcome, type EventCounts, type Outcome, type OutcomeOptions } from './outcome.ts';
export type { LatencySummary } from './percentiles.ts';
export {
  DEFAULT_CONCURRENCY,
  type LoadOptions,
  type LoadProgress,
  type LoadResult,
  runLoad,
} from './runLoad.ts';
export {
  DEFAULT_RETRY,
  isShed,
  OVERLOADED,
  type RetryPolicy,
  rejectionReason,
  type SentOrder,
} from './sendOrder.ts';
export { formatMarkdown, formatSummary } from './summary.ts';
