import { ProduceAcks, Producer } from '@platformatic/kafka';
import { checkAcknowledged } from '../acknowledgement.ts';
import type {
  EventProducer,
  MessageHeaders,
  PartitionAck,
  PartitionedMessages,
  ProducerOptions,
} from '../ports.ts';
import { asSendError } from './errors.ts';
import { baseOptions, type PlatformaticOptions } from './options.ts';

type Bytes = Buffer | undefined;

/**
 * The @platformatic/kafka adapter of the project's producer (EventProducer, ports.ts): idempotent,
 * acks=all, every message on the partition the caller set, and the same answer check as kafkajs'
 * (checkAcknowledged): each partition written to must be among the offsets the broker returned.
 *
 * A failed send may have written some partitions of its batch. The client then drops its producer
 * id and sequence numbers itself (its producer.js, on any error of an idempotent send), and takes
 * a new id on the next send, so a batch sent again is a duplicate at worst, never refused as out
 * of order nor taken for a retry and dropped: what kafkajs needed a new producer for
 * (kafkajs/producer.ts).
 */
export class PlatformaticProducer implements EventProducer {
  readonly #producer: Producer<Bytes, Bytes, Bytes, Bytes>;
  readonly #idempotent: boolean;
  #connected: Promise<unknown> | undefined;

  constructor(options: PlatformaticOptions, { idempotent = true }: ProducerOptions = {}) {
    const base = baseOptions(options);
    this.#idempotent = idempotent;
    this.#producer = new Producer<Bytes, Bytes, Bytes, Bytes>({
      ...base,
      // An idempotent producer given 0 or 1 retries retries for ever (its producer.js): at least 2
      // keeps a send bounded, so the relay backs off and reports itself degraded.
      retries: idempotent ? Math.max(2, Number(base.retries)) : base.retries,
      idempotent,
      acks: ProduceAcks.ALL,
      autocreateTopics: false,
    });
  }

  /** Takes a producer id from the cluster (or, not idempotent, its metadata): resolves only when a broker answers. */
  async connect(): Promise<void> {
    this.#connected ??= (
      this.#idempotent
        ? this.#producer.initIdempotentProducer({})
        : this.#producer.metadata({ topics: [], forceUpdate: true })
    ).catch((err: unknown) => {
      this.#connected = undefined;
      throw asSendError(err);
    });
    await this.#connected;
  }

  async send(topicMessages: PartitionedMessages[]): Promise<PartitionAck[]> {
    await this.connect();
    const messages = topicMessages.flatMap(({ topic, messages }) =>
      messages.map((message) => ({
        topic,
        partition: message.partition,
        key: bytes(message.key),
        value: bytes(message.value),
        headers: headerMap(message.headers),
      })),
    );
    const { offsets = [] } = await this.#producer.send({ messages }).catch((err: unknown) => {
      throw asSendError(err);
    });
    const acks = offsets.map(({ topic, partition, offset }) => ({
      topic,
      partition,
      baseOffset: String(offset),
    }));
    return checkAcknowledged(topicMessages, acks);
  }

  async disconnect(): Promise<void> {
    this.#connected = undefined;
    await this.#producer.close();
  }
}

function bytes(value: string | Buffer | null | undefined): Bytes {
  if (value === null || value === undefined) return undefined;
  return Buffer.isBuffer(value) ? value : Buffer.from(value);
}

/** One value per header name, as every header the services write has; a list is refused, not cut. */
function headerMap(headers: MessageHeaders | undefined): Map<Bytes, Bytes> {
  const map = new Map<Bytes, Bytes>();
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    if (Array.isArray(value)) throw new Error(`header ${name} has several values; send one value per header`);
    map.set(Buffer.from(name), bytes(value));
  }
  return map;
}
