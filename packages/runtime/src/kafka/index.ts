export { AcknowledgedProducer } from './acknowledgedProducer.ts';
export {
  type PartitionedMessages,
  partitionOf,
  sendAcknowledged,
  UnacknowledgedPartitionsError,
} from './acknowledgedSend.ts';
export { createKafka, type KafkaClientOptions } from './client.ts';
export { asRejoinIfCoordinatorLost, CONSUMER_RETRY } from './coordinatorLoss.ts';
export { ensureTopics, partitionCounts, type TopicLayout } from './ensureTopics.ts';
export { fixKafkajsIdleTimerLoop } from './requestQueueFix.ts';
