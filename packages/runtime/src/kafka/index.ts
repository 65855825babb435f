export { AcknowledgedProducer } from './acknowledgedProducer.ts';
export {
  type PartitionedMessages,
  partitionOf,
  sendAcknowledged,
  UnacknowledgedPartitionsError,
} from './acknowledgedSend.ts';
export { createKafka, type KafkaClientOptions } from './client.ts';
export {
  type Admin,
  type Consumer,
  decodeMemberAssignment,
  type EachBatchPayload,
  type IHeaders,
  javaCompatiblePartitioner,
  type Kafka,
  type KafkaMessage,
  type Message,
  type Producer,
  type RetryOptions,
} from './clientTypes.ts';
export { asRejoinIfCoordinatorLost, CONSUMER_RETRY } from './coordinatorLoss.ts';
export { ensureTopics, partitionCounts, type TopicLayout } from './ensureTopics.ts';
export { fixKafkajsIdleTimerLoop } from './requestQueueFix.ts';
