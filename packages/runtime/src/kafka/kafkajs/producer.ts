import type { Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { EventProducer, PartitionAck, PartitionedMessages, ProducerOptions } from '../ports.ts';
import { sendAcknowledged } from './send.ts';

/**
 * The kafkajs adapter of the project's producer (EventProducer, ports.ts): `send` resolves only
 * when every message is in the log.
 *
 * - idempotent (unless the naive write modes ask otherwise), acks=all: a retried send is not
 *   written twice, and an ack means every in-sync replica has the message;
 * - every partition a send wrote to must be in the broker's answer (sendAcknowledged), or the send
 *   fails: kafkajs can resolve a send whose moved partition it never wrote (tulios/kafkajs#1303);
 * - a new kafkajs producer after every failed send. A batch spans partitions, and the broker may
 *   write some of them while refusing another (one message too large, say) or while the reply is
 *   lost. kafkajs then rolls back its sequence numbers for *every* partition of the request, so its
 *   next send to a partition that was written reuses numbers the broker already holds: the broker
 *   either refuses it (OUT_OF_ORDER_SEQUENCE_NUMBER, stuck) or, if the message count matches,
 *   takes it for a retry, acknowledges it and writes nothing. A new producer gets a new producer id
 *   and fresh sequence numbers, so the worst a failure can cause is a duplicate, which consumers
 *   absorb. (Found by apps/relay/test/relay.poison-batch-loses-no-event-on-other-partitions.test.ts.)
 *
 * Several callers may send at once (the partitions a consumer works on concurrently); a send that
 * fails on a producer another failure already replaced does not replace it again.
 */
export class AcknowledgedProducer implements EventProducer {
  readonly #kafka: Kafka;
  readonly #idempotent: boolean;
  #producer: Producer;
  #connected: Promise<void> | undefined;

  constructor(kafka: Kafka, { idempotent = true }: ProducerOptions = {}) {
    this.#kafka = kafka;
    this.#idempotent = idempotent;
    this.#producer = this.#create();
  }

  /** Idempotent; `send` calls it too, so a producer created while Kafka was down recovers. */
  async connect(): Promise<void> {
    const producer = this.#producer;
    this.#connected ??= producer.connect().catch((err: unknown) => {
      if (this.#producer === producer) this.#connected = undefined;
      throw err;
    });
    await this.#connected;
  }

  /** Every message's partition is set by the caller (partitionOf), so the check knows what to expect. */
  async send(topicMessages: PartitionedMessages[]): Promise<PartitionAck[]> {
    const producer = this.#producer;
    try {
      await this.connect();
      return await sendAcknowledged(producer, topicMessages);
    } catch (err) {
      if (this.#producer === producer) await this.#replace();
      throw err;
    }
  }

  async disconnect(): Promise<void> {
    this.#connected = undefined;
    await this.#producer.disconnect();
  }

  #create(): Producer {
    return this.#kafka.producer({
      ...(this.#idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {}),
      allowAutoTopicCreation: false,
      // Named, not left to kafkajs' default: the murmur2 partitioner of the Java client, so a key
      // (an aggregate id) lands on the same partition whichever client produces it. Naming it also
      // silences kafkajs' "default partitioner changed" warning at every start.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  async #replace(): Promise<void> {
    const failed = this.#producer;
    this.#producer = this.#create();
    this.#connected = undefined;
    await failed.disconnect().catch(() => {});
  }
}
