import type { Producer } from 'kafkajs';
import { checkAcknowledged } from '../acknowledgement.ts';
import type { PartitionAck, PartitionedMessages } from '../ports.ts';

/**
 * kafkajs' sendBatch with acks=all, then checkAcknowledged: every partition the batch wrote to is
 * in the answer, without an error, or UnacknowledgedPartitionsError.
 */
export async function sendAcknowledged(
  producer: Producer,
  topicMessages: PartitionedMessages[],
): Promise<PartitionAck[]> {
  const answers = await producer.sendBatch({ topicMessages, acks: -1 });
  const acks = answers
    .filter((answer) => answer.errorCode === 0)
    .map((answer) => ({
      topic: answer.topicName,
      partition: answer.partition,
      baseOffset: answer.baseOffset ?? '',
    }));
  return checkAcknowledged(topicMessages, acks);
}
