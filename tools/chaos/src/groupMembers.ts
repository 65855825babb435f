// Who holds which partition of a consumer group, as its coordinator sees it: the members of the
// group and each one's assignment, on either group protocol. kafkajs (the checker's client
// elsewhere) speaks only the classic DescribeGroups, which answers nothing for a group on the
// consumer protocol (KIP-848); @platformatic/kafka has both that call and ConsumerGroupDescribe.
import {
  Admin,
  ConfigResourceTypes,
  Connection,
  consumerGroupDescribeV0,
  FindCoordinatorKeyTypes,
} from '@platformatic/kafka';

/** A member of a group and the partitions it holds now, each as `topic/partition`. */
export type GroupMemberView = { memberId: string; partitions: string[] };

/** A group's protocol (undefined while the broker knows no such group) and its members now. */
export type GroupView = { protocol: 'classic' | 'consumer' | undefined; members: GroupMemberView[] };

export type GroupObserver = {
  describe(groupId: string): Promise<GroupView>;
  /**
   * How long the group waits for a silent member before it drops it and hands its partitions on:
   * on the consumer protocol the broker's group.consumer.session.timeout.ms, read from the group's
   * coordinator; on the classic one each member's own, which the services leave at 30 s (kafkajs's
   * default, and SESSION_TIMEOUT_MS of the @platformatic/kafka adapter), not visible from outside.
   */
  sessionTimeoutMs(groupId: string, protocol: GroupView['protocol']): Promise<number>;
  close(): Promise<void>;
};

/** The classic members' session timeout (GroupObserver.sessionTimeoutMs). */
const CLASSIC_SESSION_TIMEOUT_MS = 30_000;

const partitionKey = (topic: string, partition: number) => `${topic}/${partition}`;

/**
 * One admin client and a connection per coordinator, kept for the run. Each call asks the broker
 * which protocol the group runs on (ListGroups) and its coordinator (FindCoordinator) afresh: a
 * broker restarted by the scenario may have moved either.
 */
export function observeGroups(brokers: string[]): GroupObserver {
  const admin = new Admin({ clientId: 'chaos-group-observer', bootstrapBrokers: brokers });
  const connections = new Map<string, Connection>();

  const connectionTo = async (host: string, port: number): Promise<Connection> => {
    const key = `${host}:${port}`;
    const open = connections.get(key);
    if (open?.isConnected()) return open;
    await open?.close().catch(() => undefined);
    const connection = new Connection('chaos-group-observer');
    await connection.connect(host, port);
    connections.set(key, connection);
    return connection;
  };

  const coordinatorOf = async (groupId: string) => {
    const [coordinator] = await admin.findCoordinator({
      keyType: FindCoordinatorKeyTypes.GROUP,
      keys: [groupId],
    });
    if (!coordinator) throw new Error(`no coordinator for group ${groupId}`);
    return coordinator;
  };

  /** KIP-848's ConsumerGroupDescribe, sent to the group's coordinator. */
  const consumerGroup = async (groupId: string): Promise<GroupMemberView[]> => {
    const coordinator = await coordinatorOf(groupId);
    const connection = await connectionTo(coordinator.host, coordinator.port);
    const response = await consumerGroupDescribeV0.api.async(connection, [groupId], false);
    return (response.groups[0]?.members ?? []).map((member) => ({
      memberId: member.memberId,
      partitions: member.assignment.topicPartitions.flatMap(({ topicName, partitions }) =>
        partitions.map((partition) => partitionKey(topicName, partition)),
      ),
    }));
  };

  /** The classic DescribeGroups: the assignments the group's leader handed out in the last SyncGroup. */
  const classicGroup = async (groupId: string): Promise<GroupMemberView[]> => {
    const group = (await admin.describeGroups({ groups: [groupId] })).get(groupId);
    return [...(group?.members.values() ?? [])].map((member) => ({
      memberId: member.id,
      partitions: [...(member.assignments?.values() ?? [])].flatMap(({ topic, partitions }) =>
        partitions.map((partition) => partitionKey(topic, partition)),
      ),
    }));
  };

  return {
    async describe(groupId) {
      const groups = await admin.listGroups({ types: ['classic', 'consumer'] });
      const type = groups.get(groupId)?.groupType;
      if (type === undefined) return { protocol: undefined, members: [] };
      if (type === 'consumer') return { protocol: type, members: await consumerGroup(groupId) };
      return { protocol: 'classic', members: await classicGroup(groupId) };
    },
    async sessionTimeoutMs(groupId, protocol) {
      if (protocol !== 'consumer') return CLASSIC_SESSION_TIMEOUT_MS;
      const name = 'group.consumer.session.timeout.ms';
      const { nodeId } = await coordinatorOf(groupId);
      const [broker] = await admin.describeConfigs({
        resources: [
          {
            resourceType: ConfigResourceTypes.BROKER,
            resourceName: String(nodeId),
            configurationKeys: [name],
          },
        ],
      });
      const value = broker?.configs.find((config) => config.name === name)?.value;
      if (!value) throw new Error(`broker ${nodeId} did not say its ${name}`);
      return Number(value);
    },
    async close() {
      await Promise.allSettled([...connections.values()].map((connection) => connection.close()));
      await admin.close();
    },
  };
}
