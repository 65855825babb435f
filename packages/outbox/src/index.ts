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
export { OUTBOX_SESSION_OPTIONS } from './claimSql.ts';
export { outboxMigrationsDir } from './migrations.ts';
export {
  type ClaimedRow,
  envelopeOf,
  insertOutboxRow,
  insertOutboxRows,
  type OutboxInsert,
  type OutboxRow,
  outboxColumnArrays,
  outboxValues,
  toEnvelope,
} from './outboxRow.ts';
export {
  claimBatch,
  deletePublished,
  markAndClaim,
  markFailed,
  markPublished,
  type OutboxStats,
  outboxSql,
  outboxStats,
  preparedStatementNames,
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
