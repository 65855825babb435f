import { type Admin, AssignerProtocol } from 'kafkajs';
import type {
  ClusterBrokers,
  CommittedOffsets,
  ConsumerGroupDescription,
  NewTopic,
  PartitionLeadership,
  PartitionOffsets,
  TopicAdmin,
} from '../ports.ts';

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

  async describeCluster(): Promise<ClusterBrokers> {
    const { brokers, controller } = await this.#admin.describeCluster();
    return { brokers: brokers.map(({ nodeId, host, port }) => ({ nodeId, host, port })), controller };
  }

  async partitionLeadership(topics: string[]): Promise<PartitionLeadership[]> {
    if (topics.length === 0) return [];
    const { topics: metadata } = await this.#admin.fetchTopicMetadata({ topics });
    return metadata.flatMap(({ name, partitions }) =>
      partitions.map(({ partitionId, leader, replicas, isr }) => ({
        topic: name,
        partition: partitionId,
        leader,
        replicas,
        isr,
      })),
    );
  }

  async consumerGroups(): Promise<ConsumerGroupDescription[]> {
    const { groups } = await this.#admin.listGroups();
    const ids = groups.filter((group) => group.protocolType === 'consumer').map((group) => group.groupId);
    if (ids.length === 0) return [];
    const described = await this.#admin.describeGroups(ids);
    return described.groups.map(({ groupId, state, members }) => ({
      groupId,
      state,
      members: members.map(({ memberId, clientId, clientHost, memberAssignment }) => ({
        memberId,
        clientId,
        host: clientHost,
        // DescribeGroups' bytes: topic → partitions; empty while the member waits for its assignment.
        assignment:
          memberAssignment.length > 0
            ? (AssignerProtocol.MemberAssignment.decode(memberAssignment)?.assignment ?? {})
            : {},
      })),
    }));
  }
}
