// The Kafka seam: the project's ports (ports.ts), the client choice (client.ts) and what holds for
// every client. Each client lives in its own folder behind the ports (kafkajs/, platformatic/);
// production code imports only this. The lab's kafkajs helpers: '@outbox/runtime/kafka/kafkajs'.
export { checkAcknowledged, KafkaSendError, UnacknowledgedPartitionsError } from './acknowledgement.ts';
export { createKafkaClient } from './client.ts';
export { CONSUMER_RETRY, type KafkaClientOptions, type RetryOptions } from './clientOptions.ts';
export { ensureTopics, type TopicLayout } from './ensureTopics.ts';
export { partitionOf } from './partitioner.ts';
export type {
  ClusterBrokers,
  CommittedOffsets,
  ConsumedMessage,
  ConsumerGroupDescription,
  EventProducer,
  GroupMember,
  GroupMemberOptions,
  KafkaClient,
  KafkaClientName,
  KafkaGroupProtocol,
  MessageContent,
  MessageHeaders,
  NewTopic,
  OutgoingMessage,
  PartitionAck,
  PartitionBatch,
  PartitionedMessages,
  PartitionLeadership,
  PartitionOffsets,
  ProducerOptions,
  TopicAdmin,
  TopicPartitionOffsets,
} from './ports.ts';
