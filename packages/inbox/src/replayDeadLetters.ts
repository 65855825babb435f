import { type Kafka, Partitioners } from 'kafkajs';
import { fromDeadLetterMessage } from './deadLetter.ts';

export type ReplayResult = { replayed: number; byTopic: Record<string, number> };

/**
 * Re-produce every message currently on a dead-letter topic to the topic it came from, without
 * its `dlt_*` headers, after the cause was fixed (a consumer now knows the schema version, say).
 * Reads from the beginning up to the end offsets as of the call, so it terminates, and commits
 * its progress under `groupId`: running it again replays only what was dead-lettered since.
 *
 * Every consumer group of a topic dead-letters its own copy of a bad message; the original is
 * replayed once (by `dlt_topic`/`dlt_partition`/`dlt_offset`), since every group reads it again
 * from the topic anyway. Replaying each copy would multiply the message by the number of groups.
 */
export async function replayDeadLetters(
  kafka: Kafka,
  deadLetterTopic: string,
  groupId: string,
): Promise<ReplayResult> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(deadLetterTopic);
  const committed = await admin.fetchOffsets({ groupId, topics: [deadLetterTopic] });
  await admin.disconnect();
  const start = new Map(committed[0]?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
  const remaining = new Map(
    ends
      .map((end) => [end.partition, Number(end.high) - Math.max(0, start.get(end.partition) ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
  const result: ReplayResult = { replayed: 0, byTopic: {} };
  const seen = new Set<string>();
  if (remaining.size === 0) return result;

  const producer = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner });
  const consumer = kafka.consumer({ groupId });
  await Promise.all([producer.connect(), consumer.connect()]);
  try {
    await consumer.subscribe({ topics: [deadLetterTopic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const left = remaining.get(partition) ?? 0;
            if (left <= 0) return;
            remaining.set(partition, left - 1);
            const { topic, message: original } = fromDeadLetterMessage(message);
            const origin = ['dlt_topic', 'dlt_partition', 'dlt_offset']
              .map((name) => message.headers?.[name])
              .join(':');
            if (!seen.has(origin)) {
              seen.add(origin);
              await producer.send({ topic, acks: -1, messages: [original] });
              result.replayed += 1;
              result.byTopic[topic] = (result.byTopic[topic] ?? 0) + 1;
            }
            if ([...remaining.values()].every((count) => count <= 0)) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect(); // commits the offsets of what was replayed
    await producer.disconnect();
  }
  return result;
}
