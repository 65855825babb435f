import { randomBytes } from 'node:crypto';
import { topicFor } from '@outbox/contracts';
import { deadLetterTopic } from '@outbox/inbox';
import type { Consumer, KafkaMessage } from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka';
import type { Logger } from '@outbox/runtime/logger';
import { errorMessage } from './services.ts';
import type { ConsumersResponse, DeadLetterView } from './shared/api.ts';

/** The topics consumers read; each has a `<topic>.dlt` next to it for messages they could not read. */
const AGGREGATE_TYPES = ['order', 'reservation', 'payment'];
const KEEP_PER_TOPIC = 20;
const RETRY_MS = 5000;

export type DeadLetterWatcher = {
  snapshot(): ConsumersResponse['deadLetters'];
  stop(): Promise<void>;
};

function header(message: KafkaMessage, name: string): string | null {
  const value = message.headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === null ? null : first.toString();
}

/**
 * Reads the dead-letter topics from the beginning with a consumer group of its own (it commits
 * nothing, so it never moves anyone's offsets) and keeps the newest messages of each in memory.
 * While Kafka is unreachable it retries; what it read before stays on screen.
 */
export function watchDeadLetters(options: {
  brokers: string[];
  topicPrefix: string;
  logger: Logger;
}): DeadLetterWatcher {
  const topics = AGGREGATE_TYPES.map((type) => deadLetterTopic(topicFor(type, options.topicPrefix)));
  const logger = options.logger.child({ component: 'dead-letter-watcher' });
  // kafkajs logs every failed reconnect as an error; while the broker is down (on purpose, in the
  // demo) the console says so on screen instead, and logs only when reading stops or resumes.
  const kafka = createKafka({
    clientId: 'console',
    brokers: options.brokers,
    logger: logger.child({}, { level: 'silent' }),
  });
  const messages = new Map<string, DeadLetterView>();
  let consumer: Consumer | undefined;
  let status: ConsumersResponse['deadLetters']['status'] = 'connecting';
  let lastError: string | undefined;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | undefined;
  const closing: Promise<void>[] = [];

  const remember = (topic: string, partition: number, message: KafkaMessage) => {
    messages.set(`${topic}/${partition}/${message.offset}`, {
      topic,
      partition,
      offset: message.offset,
      key: message.key?.toString() ?? null,
      eventType: header(message, 'ce_type'),
      eventId: header(message, 'ce_id'),
      reason: header(message, 'dlt_reason'),
      consumer: header(message, 'dlt_consumer'),
      time: header(message, 'dlt_time'),
    });
    const ofTopic = [...messages.entries()].filter(([, m]) => m.topic === topic);
    for (const [key] of ofTopic.slice(0, Math.max(0, ofTopic.length - KEEP_PER_TOPIC))) messages.delete(key);
  };

  const start = async () => {
    if (stopped) return;
    status = 'connecting';
    const next = kafka.consumer({
      groupId: `console-dead-letters-${randomBytes(4).toString('hex')}`,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 500,
    });
    consumer = next;
    // kafkajs restarts a consumer after retriable errors by itself; after others it gives up,
    // and then this starts a fresh one a little later.
    next.on(next.events.CRASH, ({ payload }) => {
      lastError = errorMessage(payload.error);
      if (status === 'reading')
        logger.warn({ err: payload.error }, 'stopped reading the dead-letter topics; retrying');
      status = 'connecting';
      if (!payload.restart) scheduleRetry();
    });
    next.on(next.events.GROUP_JOIN, () => {
      if (status !== 'reading') logger.info({ topics }, 'reading the dead-letter topics');
      status = 'reading';
      lastError = undefined;
    });
    try {
      await next.connect();
      await next.subscribe({ topics, fromBeginning: true });
      await next.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => remember(topic, partition, message),
      });
    } catch (err) {
      // The topics do not exist until the consumers created them, or Kafka is down.
      lastError = errorMessage(err);
      logger.debug({ err }, 'cannot read the dead-letter topics yet; retrying');
      scheduleRetry();
    }
  };

  const scheduleRetry = () => {
    if (stopped || retryTimer) return;
    if (consumer) closing.push(consumer.disconnect().catch(() => {}));
    consumer = undefined;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void start();
    }, RETRY_MS);
  };

  void start();
  return {
    snapshot: () => ({
      topics,
      messages: [...messages.values()].sort((a, b) => (b.time ?? '').localeCompare(a.time ?? '')),
      status,
      ...(lastError && status !== 'reading' ? { error: lastError } : {}),
    }),
    stop: async () => {
      stopped = true;
      clearTimeout(retryTimer);
      await Promise.all([...closing, consumer?.disconnect().catch(() => {})]);
    },
  };
}
