export { type CdcConnectorOptions, renderCdcConnectorConfig } from './cdcConnector.ts';
export {
  type ConfirmationMark,
  cdcSql,
  countUndrained,
  markConfirmed,
  readSlotReader,
  type SlotReader,
  takeConfirmationMark,
} from './cdcStore.ts';
export { claimBatch, type Marked, markAndClaim, markPublished, OUTBOX_SESSION_OPTIONS } from './claimSql.ts';
export { markFailed, renewLeases, scheduleRetry } from './leaseSql.ts';
export { outboxMigrationsDir } from './migrations.ts';
export {
  type ClaimedRow,
  envelopeOf,
  insertOutboxRow,
  insertOutboxRows,
  insertOutboxRowsFrom,
  type OutboxInsert,
  type OutboxRow,
  outboxColumnArrays,
  outboxValues,
  toEnvelope,
} from './outboxRow.ts';
export { createOutboxStore, type OutboxStore, outboxSql, preparedStatementNames } from './outboxStore.ts';
export {
  deletePublished,
  type OutboxStats,
  outboxStats,
  type RedriveSelector,
  redrive,
} from './upkeepSql.ts';
export {
  prepareEvent,
  UnknownEventTypeError,
  writeEvent,
  writeEvents,
} from './writeEvent.ts';
