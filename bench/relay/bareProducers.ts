/**
 * The ceiling: bare producers (kafkajs, the relay's client, and @platformatic/kafka) sending the
 * same messages to the same broker, configured like the relay's producer.
 */
import {
  compatibilityPartitioner,
  Producer as PlatformaticProducer,
  ProduceAcks,
  stringSerializers,
} from '@platformatic/kafka';
import type { Kafka, Message, Producer } from 'kafkajs';
import { cpuSince, cpuSnapshot } from '../support/cpu.ts';
import { createTopic, freshName } from '../support/kafka.ts';
import { timed } from '../support/stats.ts';
import { params } from './params.ts';
import type { ThroughputRound, ThroughputVariant } from './throughputVariants.ts';

export type ProducerFixture = { variant: ThroughputVariant; topic: string; producers: Producer[] };
export type PlatformaticFixture = {
  variant: ThroughputVariant;
  topic: string;
  producers: PlatformaticProducer<string, Buffer, string, string>[];
};

/** kafkajs messages as @platformatic/kafka takes them (string keys and headers, Buffer values). */
export function toPlatformaticMessages(messages: Message[], topic: string) {
  return messages.map((message) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(message.headers ?? {}))
      if (value !== undefined) headers[name] = String(value);
    return {
      topic,
      key: String(message.key),
      value: Buffer.isBuffer(message.value) ? message.value : Buffer.from(String(message.value)),
      headers,
    };
  });
}

/**
 * Send `items` in batches of the relay's batch size, each producer one batch at a time, all
 * producers sharing one cursor; timed from the first send to the last acknowledgement.
 */
async function timeSends<P, T>(
  variant: ThroughputVariant,
  producers: P[],
  items: T[],
  send: (producer: P, batch: T[]) => Promise<unknown>,
  roundIndex: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  const groups = { broker: [brokerPid] };
  const cpu0 = cpuSnapshot(groups);
  let cursor = 0;
  const worker = async (producer: P) => {
    while (cursor < items.length) {
      const batch = items.slice(cursor, cursor + params.batchSize);
      cursor += batch.length;
      await send(producer, batch);
    }
  };
  const start = performance.now();
  await Promise.all(producers.map(worker));
  const elapsedMs = performance.now() - start;
  return {
    round: roundIndex,
    variant: variant.key,
    ...timed(items.length, elapsedMs),
    cpu: cpuSince(cpu0, groups),
  };
}

export function measurePlatformatic(
  { producers, topic, variant }: PlatformaticFixture,
  messages: Message[],
  roundIndex: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  // Converted before the clock starts, as the kafkajs messages are built before it.
  const converted = toPlatformaticMessages(messages, topic);
  // Configured like the relay's producer: idempotent, acks=all (-1), one batch at a time, the
  // Java client's murmur2 partitioner.
  const send = (producer: PlatformaticProducer<string, Buffer, string, string>, batch: typeof converted) =>
    producer.send({ messages: batch, acks: ProduceAcks.ALL });
  return timeSends(variant, producers, converted, send, roundIndex, brokerPid);
}

export function measureProducers(
  { producers, topic, variant }: ProducerFixture,
  messages: Message[],
  roundIndex: number,
  brokerPid: number,
): Promise<ThroughputRound> {
  // Exactly the relay's call: sendBatch with acks=-1, one request in flight per producer.
  const send = (producer: Producer, batch: Message[]) =>
    producer.sendBatch({ topicMessages: [{ topic, messages: batch }], acks: -1 });
  return timeSends(variant, producers, messages, send, roundIndex, brokerPid);
}

/** A fresh topic and `variant.count` connected kafkajs producers, configured like the relay's. */
export async function kafkajsFixture(kafka: Kafka, variant: ThroughputVariant): Promise<ProducerFixture> {
  const topic = freshName(`bare-${variant.key.toLowerCase()}`);
  await createTopic(kafka, topic, params.topicPartitions);
  const producers = Array.from({ length: variant.count }, () =>
    kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false }),
  );
  await Promise.all(producers.map((p) => p.connect()));
  return { variant, topic, producers };
}

/** A fresh topic and `variant.count` @platformatic/kafka producers, configured like the relay's. */
export async function platformaticFixture(
  kafka: Kafka,
  brokers: string[],
  variant: ThroughputVariant,
): Promise<PlatformaticFixture> {
  const topic = freshName(`bare-${variant.key.toLowerCase()}`);
  await createTopic(kafka, topic, params.topicPartitions);
  const producers = Array.from(
    { length: variant.count },
    (_, n) =>
      new PlatformaticProducer<string, Buffer, string, string>({
        clientId: `bench-platformatic-${n}`,
        bootstrapBrokers: brokers,
        idempotent: true,
        acks: ProduceAcks.ALL,
        autocreateTopics: false,
        partitioner: compatibilityPartitioner,
        serializers: {
          key: stringSerializers.key,
          value: (value?: Buffer) => value,
          headerKey: stringSerializers.headerKey,
          headerValue: stringSerializers.headerValue,
        },
      }),
  );
  return { variant, topic, producers };
}
