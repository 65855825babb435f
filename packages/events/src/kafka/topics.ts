import type { Admin } from 'kafkajs';

/**
 * One topic per aggregate type (`order.events`): every event of one aggregate, whatever its type,
 * lands on one topic and, keyed by aggregate id, on one partition, so consumers see an order's
 * ORDER_CREATED before its ORDER_CANCELLED. A topic per event type could not promise that.
 */
export function topicFor(aggregateType: string, prefix = ''): string {
  return `${prefix}${aggregateType}.events`;
}

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
