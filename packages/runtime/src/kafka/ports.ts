import type { Logger } from 'pino';

/**
 * What the project asks of a Kafka client, in its own words: the messages, the producer the relay,
 * the dead letters and the replays send through, the admin calls that create, measure and describe
 * topics and groups, and a consumer group member that hands the loop one partition's messages at a
 * time. Each client implements them in its own folder (kafkajs/, platformatic/), the only code that
 * imports its package; everything else is written against these types, not a client's API.
 */

/** Header values as they travel: one value or several of the same name. */
export type MessageHeaders = Record<string, string | Buffer | (string | Buffer)[] | undefined>;

/** A message's content, as written: what a dead letter keeps of the message it stands for. */
export type MessageContent = {
  key?: string | Buffer | null;
  value: string | Buffer | null;
  headers?: MessageHeaders;
};

/** A message to send, its partition set by the sender (partitionOf), so the check knows what to expect. */
export type OutgoingMessage = MessageContent & { partition: number };

/** A message as a consumer reads it: its bytes untouched, and where it sits in its partition. */
export type ConsumedMessage = {
  key: Buffer | null;
  value: Buffer | null;
  headers?: MessageHeaders;
  offset: string;
  /** When it was produced (or appended), in milliseconds since the epoch, as a decimal string. */
  timestamp: string;
};

/** Messages for one topic, each with the partition it goes to set explicitly. */
export type PartitionedMessages = { topic: string; messages: OutgoingMessage[] };

/** A partition the broker wrote a batch's messages to, and the offset of the first of them. */
export type PartitionAck = { topic: string; partition: number; baseOffset: string };

/** How a producer is built: the project's one kind unless the naive write modes ask for less. */
export type ProducerOptions = {
  /**
   * True unless said otherwise. Only the naive write modes of the demo turn it off: their producer
   * is shared by concurrent requests, has no sequence to protect, and its duplicates are part of
   * the lesson.
   */
  idempotent?: boolean;
};

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

/** The brokers the cluster lists now, and the one that is its controller (null when none answers so). */
export type ClusterBrokers = {
  brokers: { nodeId: number; host: string; port: number }[];
  controller: number | null;
};

/** A partition's leader and replicas, by broker id: what a broker's death changes. */
export type PartitionLeadership = {
  topic: string;
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
};

/** A consumer group of the cluster, with what each member was assigned (topic → partitions). */
export type ConsumerGroupDescription = {
  groupId: string;
  state: string;
  members: { memberId: string; clientId: string; host: string; assignment: Record<string, number[]> }[];
};

/** The admin calls the services make: create topics, read their layout and offsets, describe the cluster. */
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
  /** The brokers and the controller, from the cluster's metadata. */
  describeCluster(): Promise<ClusterBrokers>;
  /** Each partition of the given (existing) topics: leader, replicas and in-sync replicas. */
  partitionLeadership(topics: string[]): Promise<PartitionLeadership[]>;
  /** Every consumer group of the cluster (protocol type `consumer`), with its members' assignments. */
  consumerGroups(): Promise<ConsumerGroupDescription[]>;
}

/** Offsets to commit: the next offset to read of each partition (one past the last applied). */
export type TopicPartitionOffsets = {
  topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
};

/**
 * One partition's fetched messages, in offset order, and what the loop may do with them: the part
 * of kafkajs's eachBatch payload the loop uses, which the other adapter provides too.
 */
export type PartitionBatch = {
  batch: { topic: string; partition: number; messages: ConsumedMessage[] };
  /** This message was applied: its offset (plus one) is committed by the next commit. */
  resolveOffset(offset: string): void;
  /** Throws when the group is rebalancing; the member then rejoins. */
  heartbeat(): Promise<void>;
  /** False once the member is stopping or has failed. */
  isRunning(): boolean;
  /** True once the partition was taken away (a rebalance): what is left of the batch is not applied. */
  isStale(): boolean;
  /** The resolved offsets not committed yet, of every partition this member holds. */
  uncommittedOffsets(): TopicPartitionOffsets;
  /** Commits the given offsets (OffsetCommit), in the member's current generation. */
  commitOffsetsIfNecessary(offsets: TopicPartitionOffsets): Promise<void>;
};

export type GroupMemberOptions = {
  groupId: string;
  topics: string[];
  /** A member silent this long is dropped by the group (kafkajs's default: 30 s). */
  sessionTimeoutMs?: number;
  heartbeatIntervalMs: number;
  /** Partitions processed at once, each in offset order. */
  partitionsConsumedConcurrently: number;
  /** One partition's messages; resolves once it is done with them, or throws to give them back. */
  eachBatch(batch: PartitionBatch): Promise<void>;
  /** The member was replaced by a new one: what it resolved and did not commit is gone with it. */
  onReplaced(): void;
  logger: Logger;
};

/**
 * This process's member of a consumer group, consuming from the committed offsets (a new group
 * from the earliest) and replaced by a new one when the client gives up on it.
 */
export interface GroupMember {
  /** Why it is not consuming (for /healthz), or undefined while it consumes. */
  problem(): string | undefined;
  /** No more replacements; resolves once one under way has ended. Called first when stopping. */
  stopWatching(): Promise<void>;
  /** Lets the batches in progress finish, then leaves the group and closes the connections. */
  leave(): Promise<void>;
}

/** Which client library the services' producers, consumers and admin calls go through (KAFKA_CLIENT). */
export type KafkaClientName = 'kafkajs' | 'platformatic';

/**
 * How a group member takes part in its group (KAFKA_GROUP_PROTOCOL): `classic` (JoinGroup,
 * SyncGroup, the whole group paused at each change) or `consumer` (KIP-848: the broker assigns
 * partitions a few at a time, by heartbeat). kafkajs speaks only `classic`.
 */
export type KafkaGroupProtocol = 'classic' | 'consumer';

/** One client's producer, admin and group member, built with the same brokers, security and retry settings. */
export interface KafkaClient {
  readonly name: KafkaClientName;
  producer(options?: ProducerOptions): EventProducer;
  admin(): TopicAdmin;
  /** Joins the group and runs; rejects (having closed what it opened) when it cannot start. */
  groupMember(options: GroupMemberOptions): Promise<GroupMember>;
}
