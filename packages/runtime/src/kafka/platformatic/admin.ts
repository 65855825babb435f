import { Admin, findErrorBy, ListOffsetTimestamps } from '@platformatic/kafka';
import type {
  ClusterBrokers,
  CommittedOffsets,
  ConsumerGroupDescription,
  NewTopic,
  PartitionLeadership,
  PartitionOffsets,
  TopicAdmin,
} from '../ports.ts';
import { asSendError } from './errors.ts';
import { baseOptions, type PlatformaticOptions } from './options.ts';

/** How long createTopics waits for every new partition to have a leader (kafkajs' waitForLeaders). */
const LEADERS_WITHIN_MS = 30_000;

/** The @platformatic/kafka adapter of the services' admin calls (TopicAdmin, ports.ts). */
export class PlatformaticAdmin implements TopicAdmin {
  readonly #admin: Admin;

  constructor(options: PlatformaticOptions) {
    this.#admin = new Admin(baseOptions(options));
  }

  /** The client connects on its first request; this one fails when no broker answers. */
  async connect(): Promise<void> {
    await this.#admin.metadata({ topics: [], forceUpdate: true }).catch(rethrown);
  }

  async disconnect(): Promise<void> {
    await this.#admin.close();
  }

  listTopics(): Promise<string[]> {
    return this.#admin.listTopics().catch(rethrown);
  }

  /**
   * One request per topic: the client applies one set of configs to a whole request. A topic
   * another process created meanwhile is no error, as with kafkajs.
   */
  async createTopics(topics: NewTopic[]): Promise<void> {
    for (const { topic, partitions, replicationFactor, configs } of topics) {
      await this.#admin
        .createTopics({
          topics: [topic],
          partitions,
          replicas: replicationFactor,
          configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
        })
        .catch((err: unknown) => {
          if (!findErrorBy(err as Error, 'apiId', 'TOPIC_ALREADY_EXISTS')) rethrown(err);
        });
    }
    await this.#leadersOf(topics.map(({ topic }) => topic));
  }

  async partitionCounts(topics: string[]): Promise<Map<string, number>> {
    const metadata = await this.#admin.metadata({ topics, forceUpdate: true }).catch(rethrown);
    return new Map(topics.map((topic) => [topic, metadata.topics.get(topic)?.partitionsCount ?? 0]));
  }

  async topicOffsets(topic: string): Promise<PartitionOffsets[]> {
    const count = (await this.partitionCounts([topic])).get(topic) ?? 0;
    const at = async (timestamp: bigint) => {
      const partitions = Array.from({ length: count }, (_, partitionIndex) => ({
        partitionIndex,
        timestamp,
      }));
      const [listed] = await this.#admin.listOffsets({ topics: [{ name: topic, partitions }] });
      return new Map((listed?.partitions ?? []).map((p) => [p.partitionIndex, String(p.offset)]));
    };
    const [low, high] = await Promise.all([
      at(ListOffsetTimestamps.EARLIEST),
      at(ListOffsetTimestamps.LATEST),
    ]);
    return Array.from({ length: count }, (_, partition) => ({
      partition,
      low: low.get(partition) ?? '0',
      high: high.get(partition) ?? '0',
    }));
  }

  /** Every partition of each topic, `-1` where the group never committed (as kafkajs answers). */
  async committedOffsets(groupId: string, topics: string[]): Promise<CommittedOffsets[]> {
    const counts = await this.partitionCounts(topics);
    const [group] = await this.#admin.listConsumerGroupOffsets({
      groups: [
        {
          groupId,
          topics: topics.map((name) => ({
            name,
            partitionIndexes: Array.from({ length: counts.get(name) ?? 0 }, (_, i) => i),
          })),
        },
      ],
    });
    return topics.map((topic) => {
      const listed = group?.topics.find(({ name }) => name === topic)?.partitions ?? [];
      return {
        topic,
        partitions: Array.from({ length: counts.get(topic) ?? 0 }, (_, partition) => ({
          partition,
          offset: String(listed.find((p) => p.partitionIndex === partition)?.committedOffset ?? -1n),
        })),
      };
    });
  }

  async describeCluster(): Promise<ClusterBrokers> {
    const metadata = await this.#admin.metadata({ topics: [], forceUpdate: true }).catch(rethrown);
    return {
      brokers: [...metadata.brokers].map(([nodeId, { host, port }]) => ({ nodeId, host, port })),
      controller: metadata.controllerId,
    };
  }

  async partitionLeadership(topics: string[]): Promise<PartitionLeadership[]> {
    if (topics.length === 0) return [];
    const metadata = await this.#admin.metadata({ topics, forceUpdate: true }).catch(rethrown);
    return topics.flatMap((topic) =>
      (metadata.topics.get(topic)?.partitions ?? []).map(({ leader, replicas, isr }, partition) => ({
        topic,
        partition,
        leader,
        replicas,
        isr,
      })),
    );
  }

  /** Classic groups with the consumer protocol type, as kafkajs' listGroups shows them. */
  async consumerGroups(): Promise<ConsumerGroupDescription[]> {
    const listed = await this.#admin.listGroups().catch(rethrown);
    const ids = [...listed.values()].filter((g) => g.protocolType === 'consumer').map((g) => g.id);
    if (ids.length === 0) return [];
    const described = await this.#admin.describeGroups({ groups: ids }).catch(rethrown);
    return [...described.values()].map(({ id, state, members }) => ({
      groupId: id,
      state,
      members: [...members.values()].map(({ id: memberId, clientId, clientHost, assignments }) => ({
        memberId,
        clientId,
        host: clientHost,
        assignment: Object.fromEntries(
          [...(assignments?.values() ?? [])].map(({ topic, partitions }) => [topic, partitions]),
        ),
      })),
    }));
  }

  /** Waits until every partition of the topics has a leader, as kafkajs' waitForLeaders does. */
  async #leadersOf(topics: string[]): Promise<void> {
    const deadline = Date.now() + LEADERS_WITHIN_MS;
    for (;;) {
      const metadata = await this.#admin.metadata({ topics, forceUpdate: true }).catch(() => undefined);
      const led = topics.every((topic) => {
        const partitions = metadata?.topics.get(topic)?.partitions ?? [];
        return partitions.length > 0 && partitions.every((partition) => partition.leader >= 0);
      });
      if (led) return;
      if (Date.now() > deadline)
        throw new Error(`topics ${topics.join(', ')} have no leader after ${LEADERS_WITHIN_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function rethrown(err: unknown): never {
  throw asSendError(err);
}
