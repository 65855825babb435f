/**
 * What the project asks of a Kafka client, in its own words: the producer the relay, the dead
 * letters and the replays send through, and the admin calls that create and measure topics. Each
 * client adapter (kafkajs: acknowledgedProducer.ts and kafkajsAdmin.ts; @platformatic/kafka:
 * platformatic/) implements them; production code is written against these, not a client's API.
 */

/** Header values as they travel: one value or several of the same name. */
export type MessageHeaders = Record<string, string | Buffer | (string | Buffer)[] | undefined>;

/** A message to send, its partition set by the sender (partitionOf), so the check knows what to expect. */
export type OutgoingMessage = {
  key?: string | Buffer | null;
  value: string | Buffer | null;
  headers?: MessageHeaders;
  partition: number;
};

/** Messages for one topic, each with the partition it goes to set explicitly. */
export type PartitionedMessages = { topic: string; messages: OutgoingMessage[] };

/** A partition the broker wrote a batch's messages to, and the offset of the first of them. */
export type PartitionAck = { topic: string; partition: number; baseOffset: string };

/**
 * The project's one kind of producer: `send` resolves only when every message is in the log:
 * idempotent, acks=all, and every partition a send wrote to named in the broker's answer without
 * an error (else UnacknowledgedPartitionsError). A failed send may have written some partitions:
 * sending it again can duplicate, never lose, a message. Several callers may send at once.
 */
export interface EventProducer {
  /** Idempotent; `send` calls it too, so a producer created while Kafka was down recovers. */
  connect(): Promise<void>;
  send(topicMessages: PartitionedMessages[]): Promise<PartitionAck[]>;
  disconnect(): Promise<void>;
}

/** A topic to create: with replicas, acks=all needs two in sync and no unclean leader (ensureTopics.ts). */
export type NewTopic = {
  topic: string;
  partitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
};

/** A partition's offsets: the first still in the log (`low`) and the next to be written (`high`). */
export type PartitionOffsets = { partition: number; low: string; high: string };

/** A group's committed offsets on one topic; `-1` where it never committed. */
export type CommittedOffsets = { topic: string; partitions: { partition: number; offset: string }[] };

/** The admin calls the services make: create topics, read their layout and offsets. */
export interface TopicAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  listTopics(): Promise<string[]>;
  /** Resolves once every new partition has a leader: a send right after it finds one. */
  createTopics(topics: NewTopic[]): Promise<void>;
  /** Each topic's partition count, from the cluster's metadata. */
  partitionCounts(topics: string[]): Promise<Map<string, number>>;
  topicOffsets(topic: string): Promise<PartitionOffsets[]>;
  committedOffsets(groupId: string, topics: string[]): Promise<CommittedOffsets[]>;
}

/** Which client library the services' producer and admin calls go through (KAFKA_CLIENT). */
export type KafkaClientName = 'kafkajs' | 'platformatic';

/** One client's producer and admin, built with the same brokers, security and retry settings. */
export interface KafkaClient {
  readonly name: KafkaClientName;
  producer(): EventProducer;
  admin(): TopicAdmin;
}
