import type { Span } from '@opentelemetry/api';
import { toKafkaMessage, topicFor } from '@outbox/contracts';
import { type ClaimedRow, toEnvelope } from '@outbox/outbox';
import {
  createKafka,
  ensureTopics,
  type PartitionedMessages,
  partitionOf,
  sendAcknowledged,
  type TopicLayout,
} from '@outbox/runtime/kafka';
import { endSpan, type OutgoingEvent, startPublishSpan } from '@outbox/runtime/trace-hand-off';
import {
  type Admin,
  type IHeaders,
  type Kafka,
  Partitioners,
  type Producer,
  type RetryOptions,
} from 'kafkajs';
import type { Logger } from 'pino';

export type { OutgoingEvent };

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
  topicPrefix: string;
  topicLayout: TopicLayout;
  logger: Logger;
  /** How long kafkajs retries a send before it fails. Default: a few seconds (see the constructor). */
  retry?: RetryOptions;
};

/**
 * Publishes outbox events to Kafka and resolves only when the broker has acknowledged every one.
 *
 * - idempotent producer + acks=all: a retried send is not written twice, and an ack means every
 *   in-sync replica has the message, so marking the row published afterwards is safe;
 * - bounded retries: while the broker is down a send fails within seconds instead of blocking
 *   for ever, so the relay can back off, report itself degraded, and its leases stay valid;
 * - a new producer after every failed send (see #replaceProducer): a failed send must never
 *   leave the idempotence bookkeeping in a state where a later send is silently dropped.
 */
export class KafkaPublisher {
  readonly #kafka: Kafka;
  #producer: Producer;
  readonly #admin: Admin;
  readonly #options: PublisherOptions;
  /** The topics this publisher has made sure of, with their partition counts. */
  readonly #partitionCounts = new Map<string, number>();
  #connected = false;

  constructor(options: PublisherOptions) {
    this.#options = options;
    this.#kafka = createKafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logger: options.logger,
      // Fail a send within a few seconds when the broker is gone; the relay's own backoff
      // takes over from there (see Relay#failed).
      retry: options.retry ?? { retries: 3, initialRetryTime: 200, maxRetryTime: 2000 },
    });
    this.#producer = this.#createProducer();
    this.#admin = this.#kafka.admin();
  }

  #createProducer(): Producer {
    return this.#kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // Named, not left to kafkajs' default: the murmur2 partitioner of the Java client, so a key
      // (an aggregate id) lands on the same partition whichever client produces it. Naming it also
      // silences kafkajs' "default partitioner changed" warning at every start.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
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
        const headers: IHeaders = { ...message.headers };
        // One PRODUCER span per event, child of the context stored with its outbox row; the
        // message's W3C headers carry this span's context to the consumers (docs/tracing.md).
        spans.push(startPublishSpan(event, topic, headers));
        const partition = partitionOf(event.subject, partitionCounts.get(topic) as number);
        entry.messages.push({ ...message, headers, partition });
      });
      try {
        await sendAcknowledged(this.#producer, [...byTopic.values()]);
      } catch (err) {
        // A topic deleted while we ran fails every send (UNKNOWN_TOPIC_OR_PARTITION, or metadata
        // that never loads) until someone creates it again: forget what we knew, so the next
        // attempt ensures the topics again instead of stopping the relay until a restart.
        this.#partitionCounts.clear();
        await this.#replaceProducer();
        throw err;
      }
    } catch (err) {
      for (const span of spans) endSpan(span, err);
      throw err;
    }
    for (const span of spans) endSpan(span);
  }

  /**
   * Why a failed send costs us the producer. A batch spans partitions, and the broker may write
   * some of them while refusing another (one message too large, say) or while the reply is lost.
   * kafkajs then rolls back its sequence numbers for *every* partition of the request, so its next
   * send to a partition that was written reuses numbers the broker already holds: the broker
   * either refuses it (OUT_OF_ORDER_SEQUENCE_NUMBER, stuck) or, if the message count matches,
   * takes it for a retry, acknowledges it and writes nothing, and the relay would mark events
   * published that never reached Kafka. A new producer gets a new producer id and fresh sequence
   * numbers, so the worst a failure can cause is a duplicate, which consumers absorb.
   * (Found by apps/relay/test/relay.poison-batch-loses-no-event-on-other-partitions.test.ts.)
   */
  async #replaceProducer(): Promise<void> {
    const failed = this.#producer;
    this.#producer = this.#createProducer();
    this.#connected = false;
    await failed.disconnect().catch(() => {});
  }

  /** Creates the topics that do not exist yet; answers each topic's partition count. */
  async #ensureTopics(topics: string[]): Promise<Map<string, number>> {
    const unknown = topics.filter((topic) => !this.#partitionCounts.has(topic));
    if (unknown.length > 0) {
      await ensureTopics(this.#admin, unknown, this.#options.topicLayout);
      const { topics: metadata } = await this.#admin.fetchTopicMetadata({ topics: unknown });
      for (const { name, partitions } of metadata) this.#partitionCounts.set(name, partitions.length);
    }
    return this.#partitionCounts;
  }

  async disconnect(): Promise<void> {
    this.#connected = false;
    await this.#producer.disconnect();
    await this.#admin.disconnect();
  }
}
