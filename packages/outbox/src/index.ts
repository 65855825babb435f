export { outboxMigrationsDir } from './migrations.ts';
export {
  insertOutboxRow,
  insertOutboxRows,
  type OutboxInsert,
  outboxColumnArrays,
  outboxValues,
} from './outboxRow.ts';
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
  prepareEvent,
  UnknownEventTypeError,
  writeEvent,
  writeEvents,
} from './writeEvent.ts';
