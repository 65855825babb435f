export { backoffDelayMs, exponentialDelayMs } from './backoff.ts';
export { outboxMigrationsDir } from './migrations.ts';
export {
  type ClaimedRow,
  claimBatch,
  deletePublished,
  markFailed,
  markPublished,
  OUTBOX_SESSION_OPTIONS,
  type OutboxRow,
  type OutboxStats,
  outboxSql,
  outboxStats,
  type RedriveSelector,
  redrive,
  renewLeases,
  scheduleRetry,
  toEnvelope,
} from './outboxStore.ts';
export {
  type OutboxInsert,
  prepareEvent,
  UnknownEventTypeError,
  writeEvent,
  writeEvents,
} from './writeEvent.ts';
