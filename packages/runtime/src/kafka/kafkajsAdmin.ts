import type { Admin, Kafka } from 'kafkajs';
import { AcknowledgedProducer } from './acknowledgedProducer.ts';
import { kafkajsGroupMember } from './kafkajs/groupConsumer.ts';
import type { CommittedOffsets, KafkaClient, NewTopic, PartitionOffsets, TopicAdmin } from './ports.ts';

/** The kafkajs adapter of the services' admin calls (TopicAdmin, ports.ts). */
export class KafkajsAdmin implements TopicAdmin {
  readonly #admin: Admin;

  constructor(admin: Admin) {
    this.#admin = admin;
  }

  /** A no-op when already connected. */
  connect(): Promise<void> {
    return this.#admin.connect();
  }

  disconnect(): Promise<void> {
    return this.#admin.disconnect();
  }

  listTopics(): Promise<string[]> {
    return this.#admin.listTopics();
  }

  async createTopics(topics: NewTopic[]): Promise<void> {
    await this.#admin.createTopics({
      waitForLeaders: true,
      topics: topics.map(({ topic, partitions, replicationFactor, configs }) => ({
        topic,
        numPartitions: partitions,
        replicationFactor,
        configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
      })),
    });
  }

  async partitionCounts(topics: string[]): Promise<Map<string, number>> {
    const { topics: metadata } = await this.#admin.fetchTopicMetadata({ topics });
    return new Map(metadata.map(({ name, partitions }) => [name, partitions.length]));
  }

  async topicOffsets(topic: string): Promise<PartitionOffsets[]> {
    const offsets = await this.#admin.fetchTopicOffsets(topic);
    return offsets.map(({ partition, low, high }) => ({ partition, low, high }));
  }

  async committedOffsets(groupId: string, topics: string[]): Promise<CommittedOffsets[]> {
    const committed = await this.#admin.fetchOffsets({ groupId, topics });
    return committed.map(({ topic, partitions }) => ({
      topic,
      partitions: partitions.map(({ partition, offset }) => ({ partition, offset })),
    }));
  }
}

/** A kafkajs client (createKafka) as the project's KafkaClient: the acknowledged producer, the admin calls, the group member. */
export function kafkajsClient(kafka: Kafka): KafkaClient {
  return {
    name: 'kafkajs',
    producer: () => new AcknowledgedProducer(kafka),
    admin: () => new KafkajsAdmin(kafka.admin()),
    groupMember: (options) => kafkajsGroupMember(kafka, options),
  };
}
