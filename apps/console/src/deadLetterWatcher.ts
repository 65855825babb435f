import { randomBytes } from 'node:crypto';
import { topicFor } from '@outbox/contracts';
import { deadLetterTopic } from '@outbox/inbox';
import {
  type ConsumedMessage,
  createKafkaClient,
  type GroupMember,
  type KafkaClient,
  type PartitionBatch,
} from '@outbox/runtime/kafka';
import type { KafkaSecurity } from '@outbox/runtime/kafka-security';
import type { Logger } from '@outbox/runtime/logger';
import { errorMessage } from './services.ts';
import type { ConsumersResponse, DeadLetterView } from './shared/apiTypes.ts';

/** The topics consumers read; each has a `<topic>.dlt` next to it for messages they could not read. */
const AGGREGATE_TYPES = ['order', 'reservation', 'payment'];
const KEEP_PER_TOPIC = 20;
const RETRY_MS = 5000;

export type DeadLetterWatcher = {
  snapshot(): ConsumersResponse['deadLetters'];
  stop(): Promise<void>;
};

function header(message: ConsumedMessage, name: string): string | null {
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
  private readonly kafka: KafkaClient;
  private readonly messages = new Map<string, DeadLetterView>();
  private member: GroupMember | undefined;
  private starting = false;
  private lastError: string | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(options: { brokers: string[]; security?: KafkaSecurity; topicPrefix: string; logger: Logger }) {
    this.topics = AGGREGATE_TYPES.map((type) => deadLetterTopic(topicFor(type, options.topicPrefix)));
    this.logger = options.logger.child({ component: 'dead-letter-watcher' });
    // The client logs every failed reconnect as an error; while the broker is down (on purpose, in
    // the demo) the console says so on screen instead, and logs only when reading stops or resumes.
    this.kafka = createKafkaClient({
      clientId: 'console',
      brokers: options.brokers,
      security: options.security,
      logger: this.logger.child({}, { level: 'silent' }),
    });
  }

  snapshot(): ConsumersResponse['deadLetters'] {
    const problem = this.member?.problem();
    const status = this.member && !problem ? 'reading' : 'connecting';
    const error = problem ?? this.lastError;
    return {
      topics: this.topics,
      messages: [...this.messages.values()].sort((a, b) => (b.time ?? '').localeCompare(a.time ?? '')),
      status,
      ...(error && status !== 'reading' ? { error } : {}),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.member) await leave(this.member);
  }

  /**
   * A group member of its own; the client replaces it when it gives up on it. While the topics do
   * not exist yet (the consumers create them) or Kafka is down, it cannot join: tried again later.
   */
  async start(): Promise<void> {
    if (this.stopped || this.starting) return;
    this.starting = true;
    try {
      const member = await this.kafka.groupMember({
        groupId: `console-dead-letters-${randomBytes(4).toString('hex')}`,
        topics: this.topics,
        heartbeatIntervalMs: 3000,
        partitionsConsumedConcurrently: 1,
        eachBatch: async (batch) => this.rememberBatch(batch),
        onReplaced: () => {},
        logger: this.logger,
      });
      if (this.stopped) {
        await leave(member);
        return;
      }
      this.member = member;
      this.lastError = undefined;
      this.logger.info({ topics: this.topics }, 'reading the dead-letter topics');
    } catch (err) {
      this.lastError = errorMessage(err);
      this.logger.debug({ err }, 'cannot read the dead-letter topics yet; retrying');
      this.scheduleRetry();
    } finally {
      this.starting = false;
    }
  }

  /** Every message is resolved, so the member reads on; nothing is ever committed. */
  private rememberBatch({ batch, resolveOffset }: PartitionBatch): void {
    for (const message of batch.messages) {
      this.remember(batch.topic, batch.partition, message);
      resolveOffset(message.offset);
    }
  }

  private remember(topic: string, partition: number, message: ConsumedMessage): void {
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
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.start();
    }, RETRY_MS);
  }
}

async function leave(member: GroupMember): Promise<void> {
  await member.stopWatching();
  await member.leave().catch(() => {});
}
