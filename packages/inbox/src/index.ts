export type { Transaction } from './applyChunk.ts';
export {
  type ChunkHandler,
  type ChunkItem,
  type ChunkResult,
  checkEventData,
  decodeChunk,
  type Unreadable,
} from './chunk.ts';
export type { ConsumerStats, FailingPartition } from './chunkOutcomes.ts';
export {
  type ConsumerService,
  type ConsumerServiceConfig,
  type ConsumerServiceOptions,
  runConsumerService,
  startConsumerService,
} from './consumerService.ts';
export { deadLetterTopic, fromDeadLetterMessage, toDeadLetterMessage } from './deadLetter.ts';
export { recordProcessed } from './dedup.ts';
export {
  type ConsumerHealth,
  type EventConsumer,
  type EventConsumerOptions,
  startEventConsumer,
} from './eventConsumer.ts';
export {
  classifyFailure,
  EventFailedError,
  type Failure,
  type FailureKind,
  PoisonEventError,
} from './failure.ts';
export {
  type ConsumerFaultSwitches,
  consumerFaultSettings,
  consumerFaultSwitches,
  consumerFaults,
  type FaultHooks,
  faultHooks,
} from './faultPoints.ts';
export type {
  Applied,
  BatchHandler,
  EffectHandler,
  EventHandlers,
  PreparedHandler,
} from './handlers.ts';
export { type RunConsumerOptions, type RunningConsumer, runConsumer } from './kafkaLoop.ts';
export { sharedMigrations } from './migrations.ts';
export { type ReplayResult, replayDeadLetters } from './replayDeadLetters.ts';
export { deleteProcessed, type InboxRetentionOptions, startInboxRetention } from './retention.ts';
