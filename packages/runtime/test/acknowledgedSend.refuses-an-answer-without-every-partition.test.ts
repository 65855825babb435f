import type { Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { partitionOf, sendAcknowledged } from '../src/kafka/acknowledgedSend.ts';
import { UnacknowledgedPartitionsError } from '../src/kafka/acknowledgement.ts';

// The answer kafkajs resolved with on a real cluster is what this checks; the real cluster's case
// is apps/relay/test/publisher.acknowledged-means-in-the-log-through-a-leader-kill.test.ts. Here a
// stand-in producer answers exactly what each case needs, which a real broker cannot be made to do.
function producerAnswering(answer: (batch: ProducerBatch) => RecordMetadata[]): Producer {
  return { sendBatch: async (batch: ProducerBatch) => answer(batch) } as unknown as Producer;
}

const ack = (topicName: string, partition: number, errorCode = 0): RecordMetadata => ({
  topicName,
  partition,
  errorCode,
  baseOffset: String(10 * partition),
});

const batch = [
  {
    topic: 'orders',
    messages: [
      { key: 'a', value: '1', partition: 0 },
      { key: 'b', value: '2', partition: 3 },
    ],
  },
  { topic: 'payments', messages: [{ key: 'c', value: '3', partition: 1 }] },
];

describe('sendAcknowledged', () => {
  it('resolves when every partition written to is acknowledged', async () => {
    const answers = [ack('orders', 0), ack('orders', 3), ack('payments', 1)];
    await expect(
      sendAcknowledged(
        producerAnswering(() => answers),
        batch,
      ),
    ).resolves.toEqual([
      { topic: 'orders', partition: 0, baseOffset: '0' },
      { topic: 'orders', partition: 3, baseOffset: '30' },
      { topic: 'payments', partition: 1, baseOffset: '10' },
    ]);
  });

  it('refuses an answer that leaves out a partition, naming it', async () => {
    const answer = producerAnswering(() => [ack('orders', 3), ack('payments', 1)]);
    const error = await sendAcknowledged(answer, batch).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnacknowledgedPartitionsError);
    expect((error as UnacknowledgedPartitionsError).partitions).toEqual(['orders[0]']);
  });

  it('refuses an answer with an error code for a partition', async () => {
    const answer = producerAnswering(() => [ack('orders', 0), ack('orders', 3, 6), ack('payments', 1)]);
    await expect(sendAcknowledged(answer, batch)).rejects.toThrow('orders[3]');
  });

  it('asks for acks from every in-sync replica', async () => {
    let asked: number | undefined;
    const answer = producerAnswering((sent) => {
      asked = sent.acks;
      return [ack('orders', 0), ack('orders', 3), ack('payments', 1)];
    });
    await sendAcknowledged(answer, batch);
    expect(asked).toBe(-1);
  });
});

describe('partitionOf', () => {
  it('puts a key where kafkajs’ Java-compatible partitioner does', () => {
    const partitioner = Partitioners.DefaultPartitioner();
    for (const partitions of [1, 2, 6, 12]) {
      const metadata = Array.from({ length: partitions }, (_, partitionId) => ({
        partitionErrorCode: 0,
        partitionId,
        leader: 1,
        replicas: [1],
        isr: [1],
      }));
      for (let i = 0; i < 200; i++) {
        const key = `0b9c6f2e-1f9a-4c1e-9d6a-${String(i).padStart(12, '0')}`;
        expect(partitionOf(key, partitions)).toBe(
          partitioner({ topic: 't', partitionMetadata: metadata, message: { key, value: null } }),
        );
      }
    }
  });

  it('matches the Java client for keys whose partitions are known', () => {
    // Kafka's own test vectors for murmur2 (org.apache.kafka.common.utils.UtilsTest#testMurmur2):
    // toPositive(murmur2("21")) = -973932308 & 0x7fffffff; the partition is that modulo the count.
    expect(partitionOf('21', 1000)).toBe((-973932308 & 0x7fffffff) % 1000);
  });
});
