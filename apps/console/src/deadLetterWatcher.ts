import { randomBytes } from 'node:crypto';
import { topicFor } from '@outbox/contracts';
import { deadLetterTopic } from '@outbox/inbox';
import type { Consumer, Kafka, KafkaMessage } from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka';
import type { KafkaSecurity } from '@outbox/runtime/kafka-security';
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
  security?: KafkaSecurity;
  topicPrefix: string;
  logger: Logger;
}): DeadLetterWatcher {
  const reader = new DeadLetterReader(options);
  void reader.start();
  return reader;
}

class DeadLetterReader implements DeadLetterWatcher {
  private readonly topics: string[];
  private readonly logger: Logger;
  private readonly kafka: Kafka;
  private readonly messages = new Map<string, DeadLetterView>();
  private consumer: Consumer | undefined;
  private status: ConsumersResponse['deadLetters']['status'] = 'connecting';
  private lastError: string | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly closing: Promise<void>[] = [];

  constructor(options: { brokers: string[]; security?: KafkaSecurity; topicPrefix: string; logger: Logger }) {
    this.topics = AGGREGATE_TYPES.map((type) => deadLetterTopic(topicFor(type, options.topicPrefix)));
    this.logger = options.logger.child({ component: 'dead-letter-watcher' });
    // kafkajs logs every failed reconnect as an error; while the broker is down (on purpose, in the
    // demo) the console says so on screen instead, and logs only when reading stops or resumes.
    this.kafka = createKafka({
      clientId: 'console',
      brokers: options.brokers,
      security: options.security,
      logger: this.logger.child({}, { level: 'silent' }),
    });
  }

  snapshot(): ConsumersResponse['deadLetters'] {
    return {
      topics: this.topics,
      messages: [...this.messages.values()].sort((a, b) => (b.time ?? '').localeCompare(a.time ?? '')),
      status: this.status,
      ...(this.lastError && this.status !== 'reading' ? { error: this.lastError } : {}),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await Promise.all([...this.closing, this.consumer?.disconnect().catch(() => {})]);
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    this.status = 'connecting';
    const consumer = this.kafka.consumer({
      groupId: `console-dead-letters-${randomBytes(4).toString('hex')}`,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 500,
    });
    this.consumer = consumer;
    this.followStatus(consumer);
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: this.topics, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => this.remember(topic, partition, message),
      });
    } catch (err) {
      // The topics do not exist until the consumers created them, or Kafka is down.
      this.lastError = errorMessage(err);
      this.logger.debug({ err }, 'cannot read the dead-letter topics yet; retrying');
      this.scheduleRetry();
    }
  }

  /**
   * kafkajs restarts a consumer after retriable errors by itself; after others it gives up, and
   * then this starts a fresh one a little later.
   */
  private followStatus(consumer: Consumer): void {
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      this.lastError = errorMessage(payload.error);
      if (this.status === 'reading') {
        this.logger.warn({ err: payload.error }, 'stopped reading the dead-letter topics; retrying');
      }
      this.status = 'connecting';
      if (!payload.restart) this.scheduleRetry();
    });
    consumer.on(consumer.events.GROUP_JOIN, () => {
      if (this.status !== 'reading')
        this.logger.info({ topics: this.topics }, 'reading the dead-letter topics');
      this.status = 'reading';
      this.lastError = undefined;
    });
  }

  private remember(topic: string, partition: number, message: KafkaMessage): void {
    this.messages.set(`${topic}/${partition}/${message.offset}`, {
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
    const ofTopic = [...this.messages.entries()].filter(([, m]) => m.topic === topic);
    for (const [key] of ofTopic.slice(0, Math.max(0, ofTopic.length - KEEP_PER_TOPIC)))
      this.messages.delete(key);
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    if (this.consumer) this.closing.push(this.consumer.disconnect().catch(() => {}));
    this.consumer = undefined;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.start();
    }, RETRY_MS);
  }
}
