import { randomBytes } from 'node:crypto';
import { topicFor } from '@outbox/contracts';
import { AGGREGATE_OF } from '@outbox/devstack/stack-plan';
import { deadLetterTopic } from '@outbox/inbox';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import type { DatabaseName } from './stack.ts';

/** Which groups consume which databases' topics (a group is named by the database it applies to). */
export const INPUTS = {
  orders: ['inventory', 'billing'],
  inventory: ['orders'],
  billing: ['orders'],
} as const satisfies Record<DatabaseName, readonly DatabaseName[]>;

export type TopicMessage = {
  topic: string;
  partition: number;
  offset: number;
  /** The Kafka key: the aggregate id. */
  key: string | undefined;
  /** CloudEvents id (`ce_id`): the outbox row id. */
  eventId: string | undefined;
  /** CloudEvents type (`ce_type`). */
  type: string | undefined;
  /** On a dead-letter topic: the consumer group that refused the message. */
  deadLetteredBy: string | undefined;
};

/** The system's topics under a prefix, and their dead-letter topics. */
export function systemTopics(prefix: string): {
  events: Record<DatabaseName, string>;
  deadLetters: string[];
} {
  const events = {
    orders: topicFor(AGGREGATE_OF.orders, prefix),
    inventory: topicFor(AGGREGATE_OF.inventory, prefix),
    billing: topicFor(AGGREGATE_OF.billing, prefix),
  };
  return { events, deadLetters: Object.values(events).map(deadLetterTopic) };
}

/**
 * Read every message of the given topics from offset 0, up to their end offsets as of the call,
 * with one consumer of its own (a fresh group; it commits nothing). Topics that do not exist are
 * read as empty. Returns messages per topic, sorted by partition then offset.
 */
export async function readTopics(
  brokers: string[],
  topics: string[],
  timeoutMs = 60_000,
): Promise<Map<string, TopicMessage[]>> {
  const result = new Map<string, TopicMessage[]>(topics.map((topic) => [topic, []]));
  const { existing, ends } = await endOffsets(brokers, topics);
  if (ends.size === 0) return result;

  const remaining = new Set(ends.keys());
  const consumer = checkerKafka(brokers, 'chaos-checker').consumer({
    groupId: `chaos-checker-${randomBytes(6).toString('hex')}`,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 200,
  });
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const header = (value: unknown): string | undefined => {
    const first = Array.isArray(value) ? value[0] : value;
    return first === undefined || first === null ? undefined : String(first);
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: existing, fromBeginning: true });
    // A fetch of control records only never reaches eachBatch; kafkajs reports it here.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      const key = `${payload.topic}/${payload.partition}`;
      if (Number(payload.lastOffset) + 1 >= (ends.get(key) ?? 0)) remaining.delete(key);
      if (remaining.size === 0) finish();
    });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const key = `${batch.topic}/${batch.partition}`;
        const end = ends.get(key) ?? 0;
        // A transactional producer (Connect's exactly-once source) ends each transaction with a
        // control record: the last offset of a partition may be a marker no message carries.
        if (Number(batch.lastOffset()) + 1 >= end) remaining.delete(key);
        for (const message of batch.messages) {
          const offset = Number(message.offset);
          if (offset >= end) continue; // published after the call: not part of this snapshot
          result.get(batch.topic)?.push({
            topic: batch.topic,
            partition: batch.partition,
            offset,
            key: message.key?.toString(),
            eventId: header(message.headers?.ce_id),
            type: header(message.headers?.ce_type),
            deadLetteredBy: header(message.headers?.dlt_consumer),
          });
          if (offset + 1 >= end) remaining.delete(key);
        }
        if (remaining.size === 0) finish();
      },
    });
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    if ((await Promise.race([finished, timedOut])) === 'timeout') {
      throw new Error(`reading ${[...remaining].join(', ')} timed out after ${timeoutMs} ms`);
    }
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  for (const messages of result.values())
    messages.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  return result;
}

/** The topics that exist, and the end offset of each partition that holds anything, as of now. */
function endOffsets(brokers: string[], topics: string[]) {
  return withAdmin(brokers, 'chaos-checker', async (admin) => {
    const ends = new Map<string, number>(); // `${topic}/${partition}` → end offset
    const present = await existing(admin, topics);
    for (const topic of present) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        if (Number(p.high) > 0) ends.set(`${topic}/${p.partition}`, Number(p.high));
      }
    }
    return { existing: present, ends };
  });
}

/** Records per topic (end offset minus start offset, summed over partitions; control records count). */
export function topicEnds(brokers: string[], topics: string[]): Promise<Map<string, number>> {
  return withAdmin(brokers, 'chaos-ends', async (admin) => {
    const sizes = new Map<string, number>();
    for (const topic of await existing(admin, topics)) {
      let size = 0;
      for (const p of await admin.fetchTopicOffsets(topic)) size += Number(p.high) - Number(p.low);
      sizes.set(topic, size);
    }
    return sizes;
  });
}

/** Committed offset vs. end offset, summed over the partitions of the topics a group consumes. */
export function consumerLag(brokers: string[], groupId: string, topics: string[]): Promise<number> {
  return withAdmin(brokers, 'chaos-lag', async (admin) => {
    let lag = 0;
    const committed = await admin.fetchOffsets({ groupId, topics: await existing(admin, topics) });
    for (const { topic, partitions } of committed) {
      for (const end of await admin.fetchTopicOffsets(topic)) {
        const done = Number(partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
        lag += Math.max(0, Number(end.high) - Math.max(done, Number(end.low)));
      }
    }
    return lag;
  });
}

/** The offsets the groups have committed on their topics, summed: grows while the groups consume. */
export function committedOffsets(
  brokers: string[],
  groups: { groupId: string; topics: string[] }[],
): Promise<number> {
  return withAdmin(brokers, 'chaos-committed', async (admin) => {
    let committed = 0;
    for (const { groupId, topics } of groups) {
      const present = await existing(admin, topics);
      for (const { partitions } of await admin.fetchOffsets({ groupId, topics: present }))
        for (const partition of partitions) committed += Math.max(0, Number(partition.offset));
    }
    return committed;
  });
}

/** A kafkajs client of the checker's, silent. */
export function checkerKafka(brokers: string[], clientId: string): Kafka {
  fixKafkajsIdleTimerLoop();
  return new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING });
}

/** An admin client for the length of `use`, disconnected whatever happens. */
export async function withAdmin<T>(
  brokers: string[],
  clientId: string,
  use: (admin: Admin) => Promise<T>,
): Promise<T> {
  const admin = checkerKafka(brokers, clientId).admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

/** The topics among these that exist (listing a topic that does not fails the whole call). */
async function existing(admin: Admin, topics: string[]): Promise<string[]> {
  const known = new Set(await admin.listTopics());
  return topics.filter((topic) => known.has(topic));
}
