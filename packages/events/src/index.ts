export {
  type EventJsonSchema,
  eventJsonSchemas,
  jsonSchemaName,
  toEventJsonSchema,
} from './contracts/jsonSchema.ts';
export { ORDER_CREATED, type OrderCreatedV1, orderCreatedV1 } from './contracts/orderCreated.ts';
export { eventSchemas, schemaFor } from './contracts/registry.ts';
export type { EventEnvelope, NewEvent } from './envelope.ts';
export { type ApplyResult, applyOnce } from './inbox/applyOnce.ts';
export {
  type ConsumerStats,
  type EventHandler,
  type RunningConsumer,
  runConsumer,
} from './inbox/runConsumer.ts';
export { createKafka } from './kafka/client.ts';
export { fromKafkaMessage, MalformedEventError, toKafkaMessage } from './kafka/cloudEvents.ts';
export { hideKafkajsTimeoutWarning } from './kafka/nodeWarnings.ts';
export { ensureTopics, topicFor } from './kafka/topics.ts';
export { sharedMigrations } from './migrations.ts';
export { backoffDelayMs } from './outbox/backoff.ts';
export { type ClaimedRow, claimBatch } from './outbox/claimBatch.ts';
export { deletePublished } from './outbox/deletePublished.ts';
export { markFailed } from './outbox/markFailed.ts';
export { markPublished } from './outbox/markPublished.ts';
export { type OutboxRow, toEnvelope } from './outbox/outboxRow.ts';
export { type OutboxStats, outboxStats } from './outbox/outboxStats.ts';
export { type RedriveSelector, redrive } from './outbox/redrive.ts';
export { scheduleRetry } from './outbox/scheduleRetry.ts';
export { UnknownEventTypeError, writeEvent } from './outbox/writeEvent.ts';
export type { PgClientLike, PrismaTransactionLike, SqlExecutor } from './sqlExecutor.ts';
