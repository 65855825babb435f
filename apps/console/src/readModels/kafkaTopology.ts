import { topicFor } from '@outbox/contracts';
import { createKafka } from '@outbox/runtime/kafka';
import type { Logger } from '@outbox/runtime/logger';
import type { Admin } from 'kafkajs';
import type { KafkaTopology } from '../shared/api.ts';

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
    logger: options.logger.child({ level: 'fatal' }),
    retry: { retries: 0 },
  });
  const topics = ['order', 'reservation', 'payment'].map((aggregate) =>
    topicFor(aggregate, options.topicPrefix),
  );
  let admin: Admin | undefined;

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
        };
      } catch (error) {
        const failed = admin;
        admin = undefined;
        await failed?.disconnect().catch(() => {});
        return {
          brokers: [],
          controller: null,
          partitions: [],
          error: `Kafka does not answer: ${String(error)}`,
        };
      }
    },
    async close() {
      await admin?.disconnect().catch(() => {});
    },
  };
}
