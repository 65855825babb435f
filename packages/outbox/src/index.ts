export { type CdcConnectorOptions, renderCdcConnectorConfig } from './cdcConnector.ts';
export { OUTBOX_SESSION_OPTIONS } from './claimSql.ts';
export { outboxMigrationsDir } from './migrations.ts';
export {
  type ClaimedRow,
  insertOutboxRow,
  insertOutboxRows,
  type OutboxInsert,
  type OutboxRow,
  outboxColumnArrays,
  outboxValues,
  toEnvelope,
} from './outboxRow.ts';
export {
  type CdcRetentionMark,
  cdcRetentionCandidates,
  claimBatch,
  deletePublished,
  deleteReadByReplicationSlot,
  markFailed,
  markPublished,
  type OutboxStats,
  outboxSql,
  outboxStats,
  type RedriveSelector,
  redrive,
  renewLeases,
  scheduleRetry,
} from './outboxStore.ts';
export {
  prepareEvent,
  UnknownEventTypeError,
  writeEvent,
  writeEvents,
} from './writeEvent.ts';
