import type { Span } from '@opentelemetry/api';
import { toKafkaMessage, topicFor } from '@outbox/contracts';
import { type ClaimedRow, toEnvelope } from '@outbox/outbox';
import {
  createKafkaClient,
  type EventProducer,
  ensureTopics,
  type KafkaClientName,
  type MessageHeaders,
  type PartitionedMessages,
  partitionOf,
  type RetryOptions,
  type TopicAdmin,
  type TopicLayout,
} from '@outbox/runtime/kafka';
import type { KafkaSecurity } from '@outbox/runtime/kafka-security';
import { endSpan, type OutgoingEvent, startPublishSpan } from '@outbox/runtime/trace-hand-off';
import type { Logger } from 'pino';

export type { OutgoingEvent };

/**
 * The relay's port to the broker: KafkaPublisher below, or anything with its publish (a test's
 * wrapper, the decorators of metrics.ts and faultPoints.ts). Events are the claimed rows'
 * envelopes; the publisher traces each (docs/tracing.md).
 */
export type Publisher = { publish(events: OutgoingEvent[]): Promise<void> };

/**
 * The envelope of a claimed row. Only its traceparent travels on: a baggage older rows may hold
 * was never sent (docs/tracing.md), so it is not read either.
 */
export function toOutgoingEvent(row: ClaimedRow): OutgoingEvent {
  return toEnvelope(row);
}

export type PublisherOptions = {
  clientId: string;
  brokers: string[];
  security?: KafkaSecurity;
  topicPrefix: string;
  topicLayout: TopicLayout;
  logger: Logger;
  /** The client library the producer and admin calls go through (KAFKA_CLIENT); kafkajs by default. */
  client?: KafkaClientName;
  /** How long the client retries a send before it fails. Default: one retry (DEFAULT_RETRY). */
  retry?: RetryOptions;
};

/**
 * A send the broker has not answered in this long fails (kafkajs's default is 30 s). A leader
 * frozen (a long GC pause, a stopped VM) keeps its connections open and answers nothing, and
 * kafkajs retries a timed-out send against the same leader without asking for new metadata: each
 * retry waits this long again, for as long as the freeze lasts. Shorter would cut off a broker that
 * is only far away: a produce round trip of 7 s still goes through
 * (relay.renews-every-lease-it-holds-behind-a-slow-broker.test.ts).
 */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * One retry inside kafkajs (which refuses an idempotent producer without one; a moved leader: kafkajs
 * refreshes its metadata first), then the send fails and the relay's own backoff takes over
 * (Relay#failed), through a new producer (packages/runtime/src/kafka/kafkajs/producer.ts) whose fresh metadata names the
 * leaders that took over: within two request timeouts when a leader does not answer, at once when
 * a broker is gone.
 */
const DEFAULT_RETRY: RetryOptions = { retries: 1, initialRetryTime: 200, maxRetryTime: 2000 };

/**
 * Publishes outbox events to Kafka and resolves only when the broker has acknowledged every one.
 *
 * - the project's acknowledged producer (idempotent, acks=all, every partition's ack checked, a
 *   new producer after a failed send): marking the row published afterwards is safe;
 * - bounded retries: while the broker is down a send fails within seconds instead of blocking
 *   for ever, so the relay can back off, report itself degraded, and its leases stay valid.
 */
export class KafkaPublisher {
  readonly #producer: EventProducer;
  readonly #admin: TopicAdmin;
  readonly #options: PublisherOptions;
  /** The client library its producer and admin calls go through (on /healthz). */
  readonly kafkaClient: KafkaClientName;
  /** The topics this publisher has made sure of, with their partition counts. */
  readonly #partitionCounts = new Map<string, number>();
  #connected = false;

  constructor(options: PublisherOptions) {
    this.#options = options;
    const kafka = createKafkaClient({
      client: options.client,
      clientId: options.clientId,
      brokers: options.brokers,
      security: options.security,
      logger: options.logger,
      retry: options.retry ?? DEFAULT_RETRY,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    this.kafkaClient = kafka.name;
    this.#producer = kafka.producer();
    this.#admin = kafka.admin();
  }

  /** Idempotent; `publish` calls it too, so a relay that started while Kafka was down recovers. */
  async connect(): Promise<void> {
    if (this.#connected) return;
    await this.#producer.connect();
    await this.#admin.connect(); // a no-op when already connected
    this.#connected = true;
  }

  async publish(events: OutgoingEvent[]): Promise<void> {
    await this.connect();
    const spans: Span[] = [];
    try {
      const topics = events.map((event) => topicFor(event.aggregatetype, this.#options.topicPrefix));
      const partitionCounts = await this.#ensureTopics([...new Set(topics)]);
      const byTopic = new Map<string, PartitionedMessages>();
      events.forEach((event, i) => {
        const topic = topics[i] as string;
        let entry = byTopic.get(topic);
        if (!entry) {
          entry = { topic, messages: [] };
          byTopic.set(topic, entry);
        }
        // Events arrive in outbox order; messages of one key keep that order on their partition.
        const message = toKafkaMessage(event);
        const headers: MessageHeaders = { ...message.headers };
        // One PRODUCER span per event, child of the context stored with its outbox row; the
        // message's W3C headers carry this span's context to the consumers (docs/tracing.md).
        spans.push(startPublishSpan(event, topic, headers));
        const partition = partitionOf(event.subject, partitionCounts.get(topic) as number);
        entry.messages.push({ ...message, headers, partition });
      });
      try {
        await this.#producer.send([...byTopic.values()]);
      } catch (err) {
        // A topic deleted while we ran fails every send (UNKNOWN_TOPIC_OR_PARTITION, or metadata
        // that never loads) until someone creates it again: forget what we knew, so the next
        // attempt ensures the topics again instead of stopping the relay until a restart.
        this.#partitionCounts.clear();
        this.#connected = false;
        throw err;
      }
    } catch (err) {
      for (const span of spans) endSpan(span, err);
      throw err;
    }
    for (const span of spans) endSpan(span);
  }

  /** Creates the topics that do not exist yet; answers each topic's partition count. */
  async #ensureTopics(topics: string[]): Promise<Map<string, number>> {
    const unknown = topics.filter((topic) => !this.#partitionCounts.has(topic));
    if (unknown.length > 0) {
      await ensureTopics(this.#admin, unknown, this.#options.topicLayout);
      const counts = await this.#admin.partitionCounts(unknown);
      for (const [name, partitions] of counts) this.#partitionCounts.set(name, partitions);
    }
    return this.#partitionCounts;
  }

  async disconnect(): Promise<void> {
    this.#connected = false;
    await this.#producer.disconnect();
    await this.#admin.disconnect();
  }
}
