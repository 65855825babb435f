import { toKafkaMessage, topicFor } from '@outbox/contracts';
import { envelopeOf, type OutboxInsert } from '@outbox/outbox';
import {
  createKafkaClient,
  type EventProducer,
  ensureTopics,
  type MessageHeaders,
  partitionOf,
  type TopicAdmin,
  type TopicLayout,
} from '@outbox/runtime/kafka';
import type { KafkaSecurity } from '@outbox/runtime/kafka-security';
import { endSpan, startPublishSpan } from '@outbox/runtime/trace-hand-off';
import type { Logger } from 'pino';

export type NaivePublisherOptions = {
  brokers: string[];
  security?: KafkaSecurity;
  topicPrefix: string;
  topicLayout: TopicLayout;
  logger: Logger;
};

/**
 * What the naive write modes send ORDER_CREATED with, from the request itself: the very message
 * the relay would publish for the outbox row (envelope, key, CloudEvents headers, topic, the
 * murmur2 partitioner), so inventory and billing handle it unchanged. Only the write path differs.
 *
 * Bounded retries, like the relay's producer: with the broker gone a send fails within seconds
 * and the request answers an error instead of hanging. Not idempotent: a naive producer shared by
 * concurrent requests has no sequence to protect, and its duplicates are part of the lesson.
 */
export class NaivePublisher {
  readonly #producer: EventProducer;
  readonly #admin: TopicAdmin;
  readonly #options: NaivePublisherOptions;
  /** The topic ORDER_CREATED goes to, once made sure of, with its partition count. */
  #topicReady: Promise<number> | undefined;

  constructor(options: NaivePublisherOptions) {
    this.#options = options;
    const kafka = createKafkaClient({
      clientId: 'orders-naive-write',
      brokers: options.brokers,
      security: options.security,
      logger: options.logger,
      retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2000 },
    });
    this.#producer = kafka.producer({ idempotent: false });
    this.#admin = kafka.admin();
  }

  /** Send `event` (ORDER_CREATED, as prepareEvent made it) and resolve once the broker acknowledged it. */
  async send(event: OutboxInsert, createdAt: Date): Promise<void> {
    const topic = topicFor(event.aggregateType, this.#options.topicPrefix);
    const partitions = await this.#connect(topic).catch((err: unknown) => {
      this.#topicReady = undefined; // a broker that was away: try again with the next order
      throw err;
    });
    const envelope = envelopeOf(event, createdAt);
    const message = toKafkaMessage(envelope);
    const headers: MessageHeaders = { ...message.headers };
    const span = startPublishSpan(envelope, topic, headers);
    // The partition the relay would choose for the outbox row: murmur2 of the key, the aggregate id.
    const partition = partitionOf(message.key, partitions);
    try {
      await this.#producer.send([{ topic, messages: [{ ...message, headers, partition }] }]);
      endSpan(span);
    } catch (err) {
      endSpan(span, err);
      throw err;
    }
  }

  #connect(topic: string): Promise<number> {
    this.#topicReady ??= (async () => {
      await this.#producer.connect();
      await this.#admin.connect();
      await ensureTopics(this.#admin, [topic], this.#options.topicLayout);
      return (await this.#admin.partitionCounts([topic])).get(topic) as number;
    })();
    return this.#topicReady;
  }

  async disconnect(): Promise<void> {
    await this.#producer.disconnect();
    await this.#admin.disconnect();
  }
}
