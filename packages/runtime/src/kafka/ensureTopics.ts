import type { Admin } from 'kafkajs';

/** Create missing topics with the given partition count; existing topics are left as they are. */
export async function ensureTopics(admin: Admin, topics: string[], numPartitions: number): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((topic) => !existing.has(topic));
  if (missing.length === 0) return;
  await admin.createTopics({
    waitForLeaders: true,
    topics: missing.map((topic) => ({ topic, numPartitions, replicationFactor: 1 })),
  });
}
