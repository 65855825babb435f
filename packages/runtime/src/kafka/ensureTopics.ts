import type { TopicAdmin } from './ports.ts';

/** How the services create a topic that does not exist yet (KAFKA_TOPIC_PARTITIONS, KAFKA_REPLICATION_FACTOR). */
export type TopicLayout = {
  partitions: number;
  /** 1 for one broker (the local demo); 3 on a cluster, so a broker can die without losing a write. */
  replicationFactor?: number;
};

/**
 * Create missing topics; existing topics are left exactly as they are.
 *
 * With replicas, an acknowledged write (acks=all) must be on at least two of them
 * (`min.insync.replicas`), and a replica that missed writes may never become leader
 * (`unclean.leader.election.enable=false`): otherwise a leader's death can silently take back
 * messages the producer was told are written. docs/production.md, "Replication".
 */
export async function ensureTopics(admin: TopicAdmin, topics: string[], layout: TopicLayout): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((topic) => !existing.has(topic));
  if (missing.length === 0) return;
  const replicationFactor = layout.replicationFactor ?? 1;
  await admin.createTopics(
    missing.map((topic) => ({
      topic,
      partitions: layout.partitions,
      replicationFactor,
      configs: {
        'min.insync.replicas': String(Math.min(2, replicationFactor)),
        'unclean.leader.election.enable': 'false',
      },
    })),
  );
}
