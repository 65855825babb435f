export { AcknowledgedProducer } from './acknowledgedProducer.ts';
export { partitionOf, sendAcknowledged } from './acknowledgedSend.ts';
export { checkAcknowledged, KafkaSendError, UnacknowledgedPartitionsError } from './acknowledgement.ts';
export { createKafka, createKafkaClient, type KafkaClientOptions } from './client.ts';
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
export { ensureTopics, type TopicLayout } from './ensureTopics.ts';
export { KafkajsAdmin, kafkajsClient } from './kafkajsAdmin.ts';
export { platformaticClient } from './platformatic/client.ts';
export type {
  CommittedOffsets,
  EventProducer,
  GroupMember,
  GroupMemberOptions,
  KafkaClient,
  KafkaClientName,
  KafkaGroupProtocol,
  MessageHeaders,
  NewTopic,
  OutgoingMessage,
  PartitionAck,
  PartitionBatch,
  PartitionedMessages,
  PartitionOffsets,
  TopicAdmin,
  TopicPartitionOffsets,
} from './ports.ts';
export { fixKafkajsIdleTimerLoop } from './requestQueueFix.ts';
