import { topicFor } from '@outbox/contracts';
import { type Admin, createKafka, decodeMemberAssignment } from '@outbox/runtime/kafka';
import type { Logger } from '@outbox/runtime/logger';
import type { ConsumerGroupView, KafkaTopology } from '../shared/api.ts';

export type KafkaTopologyReader = { read(): Promise<KafkaTopology>; close(): Promise<void> };

/**
 * The brokers the cluster lists now and, for each partition of the system's event topics, its
 * leader and in-sync replicas: what a broker's death changes, and what its return restores. One
 * admin client, connected on first use and again after a failure (the broker may be down on purpose).
 */
export function kafkaTopologyReader(options: {
  brokers: string[];
  topicPrefix: string;
  logger: Logger;
}): KafkaTopologyReader {
  const kafka = createKafka({
    clientId: 'console-topology',
    brokers: options.brokers,
    // While every broker is down, a failed read says so on the page; no error log every second.
    logger: options.logger.child({}, { level: 'silent' }),
    retry: { retries: 0 },
  });
  const topics = ['order', 'reservation', 'payment'].map((aggregate) =>
    topicFor(aggregate, options.topicPrefix),
  );
  let admin: Admin | undefined;
  const rebalances = new Map<string, { assignment: string; seen: number; lastAt?: string }>();

  /** Each group that reads one of the event topics, with its members' partitions. */
  const readGroups = async (connected: Admin): Promise<ConsumerGroupView[]> => {
    const { groups } = await connected.listGroups();
    const consumerGroups = groups
      .filter((group) => group.protocolType === 'consumer')
      .map((group) => group.groupId);
    if (consumerGroups.length === 0) return [];
    const described = await connected.describeGroups(consumerGroups);
    const views: ConsumerGroupView[] = [];
    for (const group of described.groups) {
      const members = group.members.map((member) => {
        const decoded =
          member.memberAssignment.length > 0 ? decodeMemberAssignment(member.memberAssignment) : null;
        const partitions = Object.entries(decoded?.assignment ?? {})
          .filter(([topic]) => topics.includes(topic))
          .flatMap(([topic, ids]) => ids.map((id) => `${topic}/${id}`))
          .sort();
        return { clientId: member.clientId, memberId: member.memberId, host: member.clientHost, partitions };
      });
      const readsOurTopics = members.some((member) => member.partitions.length > 0);
      if (!readsOurTopics && !rebalances.has(group.groupId)) continue;
      // A rebalance moves partitions between members: seen as a change of who holds what.
      const assignment = members
        .map((member) => member.partitions.join(','))
        .sort()
        .join('|');
      const known = rebalances.get(group.groupId);
      if (!known) rebalances.set(group.groupId, { assignment, seen: 0 });
      else if (known.assignment !== assignment) {
        known.assignment = assignment;
        known.seen++;
        known.lastAt = new Date().toISOString();
      }
      const tracked = rebalances.get(group.groupId);
      views.push({
        groupId: group.groupId,
        state: group.state,
        members: members.sort((a, b) => a.clientId.localeCompare(b.clientId)),
        rebalancesSeen: tracked?.seen ?? 0,
        ...(tracked?.lastAt ? { lastRebalanceAt: tracked.lastAt } : {}),
      });
    }
    return views.sort((a, b) => a.groupId.localeCompare(b.groupId));
  };

  return {
    async read() {
      try {
        if (!admin) {
          admin = kafka.admin();
          await admin.connect();
        }
        const cluster = await admin.describeCluster();
        const existing = new Set(await admin.listTopics());
        const present = topics.filter((topic) => existing.has(topic));
        const metadata =
          present.length > 0 ? await admin.fetchTopicMetadata({ topics: present }) : { topics: [] };
        return {
          brokers: cluster.brokers
            .map(({ nodeId, host, port }) => ({ nodeId, address: `${host}:${port}` }))
            .sort((a, b) => a.nodeId - b.nodeId),
          controller: cluster.controller,
          partitions: metadata.topics.flatMap(({ name, partitions }) =>
            partitions
              .map((p) => ({
                topic: name,
                partition: p.partitionId,
                leader: p.leader,
                replicas: p.replicas,
                isr: p.isr,
              }))
              .sort((a, b) => a.partition - b.partition),
          ),
          groups: await readGroups(admin),
        };
      } catch (error) {
        const failed = admin;
        admin = undefined;
        await failed?.disconnect().catch(() => {});
        return {
          brokers: [],
          controller: null,
          partitions: [],
          groups: [],
          error: `Kafka does not answer: ${String(error)}`,
        };
      }
    },
    async close() {
      await admin?.disconnect().catch(() => {});
    },
  };
}
