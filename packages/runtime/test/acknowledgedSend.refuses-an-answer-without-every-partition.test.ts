import type { Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { UnacknowledgedPartitionsError } from '../src/kafka/acknowledgement.ts';
import { sendAcknowledged } from '../src/kafka/kafkajs/send.ts';

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
