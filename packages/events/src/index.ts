export {
  type EventJsonSchema,
  eventJsonSchemas,
  jsonSchemaName,
  toEventJsonSchema,
} from './contracts/jsonSchema.ts';
export { ORDER_CREATED, type OrderCreatedV1, orderCreatedV1 } from './contracts/orderCreated.ts';
export {
  ORDER_CANCELLED,
  ORDER_CONFIRMED,
  type OrderCancelledV1,
  type OrderConfirmedV1,
  orderCancelledV1,
  orderConfirmedV1,
} from './contracts/orderSaga.ts';
export {
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  type PaymentAuthorizedV1,
  type PaymentDeclinedV1,
  type PaymentVoidedV1,
  paymentAuthorizedV1,
  paymentDeclinedV1,
  paymentVoidedV1,
} from './contracts/payment.ts';
export { eventSchemas, schemaFor } from './contracts/registry.ts';
export {
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
  type StockRejectedV1,
  type StockReleasedV1,
  type StockReservedV1,
  stockRejectedV1,
  stockReleasedV1,
  stockReservedV1,
} from './contracts/stock.ts';
export type { EventEnvelope, NewEvent } from './envelope.ts';
export {
  type ApplyChunkOptions,
  applyChunk,
  type ChunkResult,
  EventFailedError,
} from './inbox/applyChunk.ts';
export { type ApplyOnceOptions, type ApplyResult, applyOnce } from './inbox/applyOnce.ts';
export { deadLetterTopic, fromDeadLetterMessage, toDeadLetterMessage } from './inbox/deadLetter.ts';
export { classifyFailure, type Failure, type FailureKind, PoisonEventError } from './inbox/failure.ts';
export { type ReplayResult, replayDeadLetters } from './inbox/replayDeadLetters.ts';
export { deleteProcessed, type InboxRetentionOptions, startInboxRetention } from './inbox/retention.ts';
export {
  type ChunkHandler,
  type ChunkItem,
  type ConsumerStats,
  type FailingPartition,
  type HandleResult,
  type RunConsumerOptions,
  type RunningConsumer,
  runConsumer,
} from './inbox/runConsumer.ts';
export { createKafka } from './kafka/client.ts';
export { fromKafkaMessage, MalformedEventError, toKafkaMessage } from './kafka/cloudEvents.ts';
export { fixKafkajsIdleTimerLoop } from './kafka/requestQueueFix.ts';
export { ensureTopics, topicFor } from './kafka/topics.ts';
export { sharedMigrations } from './migrations.ts';
export { backoffDelayMs } from './outbox/backoff.ts';
export {
  type ClaimedRow,
  claimBatch,
  deletePublished,
  markFailed,
  markPublished,
  type OutboxRow,
  type OutboxStats,
  outboxSql,
  outboxStats,
  type RedriveSelector,
  redrive,
  renewLeases,
  scheduleRetry,
  toEnvelope,
} from './outbox/outboxStore.ts';
export {
  type OutboxInsert,
  prepareEvent,
  UnknownEventTypeError,
  writeEvent,
  writeEvents,
} from './outbox/writeEvent.ts';
export { type PgClientLike, type PrismaTransactionLike, queryRows, type SqlExecutor } from './sqlExecutor.ts';
