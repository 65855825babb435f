import { topicFor } from '@outbox/contracts';
import { type ConsumerGroupDescription, createKafkaClient, type TopicAdmin } from '@outbox/runtime/kafka';
import type { KafkaSecurity } from '@outbox/runtime/kafka-security';
import type { Logger } from '@outbox/runtime/logger';
import type { ConsumerGroupView, KafkaTopology } from '../shared/apiTypes.ts';

export type KafkaTopologyReader = { read(): Promise<KafkaTopology>; close(): Promise<void> };

/**
 * The brokers the cluster lists now and, for each partition of the system's event topics, its
 * leader and in-sync replicas: what a broker's death changes, and what its return restores. One
 * admin client, connected on first use and again after a failure (the broker may be down on purpose).
 */
export function kafkaTopologyReader(options: {
  brokers: string[];
  security?: KafkaSecurity;
  topicPrefix: string;
  logger: Logger;
}): KafkaTopologyReader {
  const kafka = createKafkaClient({
    clientId: 'console-topology',
    brokers: options.brokers,
    security: options.security,
    // While every broker is down, a failed read says so on the page; no error log every second.
    logger: options.logger.child({}, { level: 'silent' }),
    // A new admin client tries the listed brokers in order, the next one only on a retry: with
    // none, a dead first broker blanked the panel for as long as it stayed dead. One quick retry
    // per other broker, so a read fails fast only when every broker is down.
    retry: { retries: options.brokers.length - 1, initialRetryTime: 50, maxRetryTime: 200 },
  });
  const topics = ['order', 'reservation', 'payment'].map((aggregate) =>
    topicFor(aggregate, options.topicPrefix),
  );
  const rebalances = new RebalanceCounter();
  let admin: TopicAdmin | undefined;
  return {
    async read() {
      try {
        if (!admin) {
          admin = kafka.admin();
          await admin.connect();
        }
        const brokersAndPartitions = await readBrokersAndPartitions(admin, topics);
        return { ...brokersAndPartitions, groups: await readGroups(admin, topics, rebalances) };
      } catch (error) {
        const failed = admin;
        admin = undefined;
        await failed?.disconnect().catch(() => {});
        const down = `Kafka does not answer: ${String(error)}`;
        return { brokers: [], controller: null, partitions: [], groups: [], error: down };
      }
    },
    async close() {
      await admin?.disconnect().catch(() => {});
    },
  };
}

async function readBrokersAndPartitions(
  admin: TopicAdmin,
  topics: string[],
): Promise<Omit<KafkaTopology, 'groups' | 'error'>> {
  const cluster = await admin.describeCluster();
  const existing = new Set(await admin.listTopics());
  const present = topics.filter((topic) => existing.has(topic));
  const partitions = await admin.partitionLeadership(present);
  return {
    brokers: cluster.brokers
      .map(({ nodeId, host, port }) => ({ nodeId, address: `${host}:${port}` }))
      .sort((a, b) => a.nodeId - b.nodeId),
    controller: cluster.controller,
    // Topic by topic, as the metadata lists them; each topic's partitions in order.
    partitions: [...Map.groupBy(partitions, (p) => p.topic).values()].flatMap((ofTopic) =>
      ofTopic.sort((a, b) => a.partition - b.partition),
    ),
  };
}

/** Each group that reads one of the event topics (or did), with its members' partitions. */
async function readGroups(
  admin: TopicAdmin,
  topics: string[],
  rebalances: RebalanceCounter,
): Promise<ConsumerGroupView[]> {
  const views: ConsumerGroupView[] = [];
  for (const group of await admin.consumerGroups()) {
    const members = membersOf(group, topics);
    const readsOurTopics = members.some((member) => member.partitions.length > 0);
    if (!readsOurTopics && !rebalances.knows(group.groupId)) continue;
    const tracked = rebalances.observe(group.groupId, members);
    views.push({
      groupId: group.groupId,
      state: group.state,
      members: members.sort((a, b) => a.clientId.localeCompare(b.clientId)),
      rebalancesSeen: tracked.seen,
      ...(tracked.lastAt ? { lastRebalanceAt: tracked.lastAt } : {}),
    });
  }
  return views.sort((a, b) => a.groupId.localeCompare(b.groupId));
}

function membersOf(group: ConsumerGroupDescription, topics: string[]): ConsumerGroupView['members'] {
  return group.members.map((member) => {
    const partitions = Object.entries(member.assignment)
      .filter(([topic]) => topics.includes(topic))
      .flatMap(([topic, ids]) => ids.map((id) => `${topic}/${id}`))
      .sort();
    return { clientId: member.clientId, memberId: member.memberId, host: member.host, partitions };
  });
}

/** A rebalance moves partitions between members: seen as a change of who holds what. */
class RebalanceCounter {
  private readonly groups = new Map<string, { assignment: string; seen: number; lastAt?: string }>();

  knows(groupId: string): boolean {
    return this.groups.has(groupId);
  }

  observe(groupId: string, members: ConsumerGroupView['members']): { seen: number; lastAt?: string } {
    const assignment = members
      .map((member) => member.partitions.join(','))
      .sort()
      .join('|');
    const known = this.groups.get(groupId);
    if (!known) {
      const first = { assignment, seen: 0 };
      this.groups.set(groupId, first);
      return first;
    }
    if (known.assignment !== assignment) {
      known.assignment = assignment;
      known.seen++;
      known.lastAt = new Date().toISOString();
    }
    return known;
  }
}
