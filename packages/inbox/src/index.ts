export {
  type ApplyChunkOptions,
  applyChunk,
  type ChunkResult,
  EventFailedError,
} from './applyChunk.ts';
export { type ApplyOnceOptions, type ApplyResult, applyOnce } from './applyOnce.ts';
export {
  type ConsumerFaults,
  consumerFaultSettings,
  consumerFaultSwitches,
  consumerFaults,
} from './consumerFaults.ts';
export {
  type ConsumerService,
  type ConsumerServiceConfig,
  type ConsumerServiceOptions,
  runConsumerService,
  startConsumerService,
} from './consumerService.ts';
export { deadLetterTopic, fromDeadLetterMessage, toDeadLetterMessage } from './deadLetter.ts';
export {
  type Applied,
  applyOne,
  type BatchHandler,
  type EffectHandler,
  type EventConsumer,
  type EventConsumerOptions,
  type EventHandlers,
  type PreparedHandler,
  startEventConsumer,
} from './eventConsumer.ts';
export { classifyFailure, type Failure, type FailureKind, PoisonEventError } from './failure.ts';
export { sharedMigrations } from './migrations.ts';
export { type ReplayResult, replayDeadLetters } from './replayDeadLetters.ts';
export { deleteProcessed, type InboxRetentionOptions, startInboxRetention } from './retention.ts';
export {
  type ChunkHandler,
  type ChunkItem,
  type ConsumerStats,
  checkEventData,
  type FailingPartition,
  type HandleResult,
  type RunConsumerOptions,
  type RunningConsumer,
  runConsumer,
} from './runConsumer.ts';
