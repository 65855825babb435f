import { randomBytes } from 'node:crypto';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import { Kafka, logLevel } from 'kafkajs';

export type TopicMessage = {
  partition: number;
  offset: number;
  /** The Kafka key: the aggregate id. */
  key: string | undefined;
  /** The CloudEvents id (`ce_id` header): the outbox row id. */
  eventId: string | undefined;
};

type ReadTopicOptions = {
  /**
   * Stop once this returns true for the messages read so far. Default: stop when every partition
   * has been read up to its end offset as of the call (everything published before the call).
   */
  until?: (messages: TopicMessage[]) => boolean;
  /** Default 30 s. */
  timeoutMs?: number;
};

/**
 * Read a topic from offset 0 with a consumer group of its own, and return the messages sorted by
 * partition, then offset (per key, that is the order a consumer sees). The consumer is
 * disconnected before this returns or throws. The topic must exist (no auto-creation).
 */
export async function readTopic(
  brokers: string[],
  topic: string,
  options: ReadTopicOptions = {},
): Promise<TopicMessage[]> {
  fixKafkajsIdleTimerLoop();
  const timeoutMs = options.timeoutMs ?? 30_000;
  const kafka = new Kafka({
    clientId: 'test-topic-reader',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
  });

  const until = options.until ?? (await untilTheEndAsOfNow(kafka, topic));

  const consumer = kafka.consumer({
    groupId: `test-reader-${randomBytes(6).toString('hex')}`,
    allowAutoTopicCreation: false,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 200,
  });
  const messages: TopicMessage[] = [];
  const { promise: finished, resolve: finish } = Promise.withResolvers<void>();
  if (until(messages)) finish();

  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          messages.push({
            partition: batch.partition,
            offset: Number(message.offset),
            key: message.key?.toString(),
            eventId: header(message.headers?.ce_id),
          });
        }
        if (until(messages)) finish();
      },
    });
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    if ((await Promise.race([finished, timedOut])) === 'timeout') {
      throw new Error(
        `readTopic(${topic}): timed out after ${timeoutMs} ms with ${messages.length} messages`,
      );
    }
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return [...messages].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

/** The default stop: every partition read up to its end offset as of now. */
async function untilTheEndAsOfNow(
  kafka: Kafka,
  topic: string,
): Promise<(messages: TopicMessage[]) => boolean> {
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, number>;
  try {
    ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)] as const));
  } finally {
    await admin.disconnect();
  }
  return (messages) => {
    const next = new Map<number, number>();
    for (const m of messages) next.set(m.partition, Math.max(next.get(m.partition) ?? 0, m.offset + 1));
    return [...ends].every(([partition, high]) => (next.get(partition) ?? 0) >= high);
  };
}

function header(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === null ? undefined : String(first);
}
