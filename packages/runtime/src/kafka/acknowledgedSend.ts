import { Partitioners, type PartitionMetadata, type Producer } from 'kafkajs';
import { checkAcknowledged } from './acknowledgement.ts';
import type { PartitionAck, PartitionedMessages } from './ports.ts';

/**
 * The partition of a key: murmur2, as the Java client and kafkajs' DefaultPartitioner compute it,
 * so an aggregate's events land on the same partition whichever client produced them. Set on the
 * message explicitly, so the sender knows which partitions must acknowledge it.
 */
export function partitionOf(key: string | Buffer, partitions: number): number {
  return javaPartitioner({
    topic: '',
    partitionMetadata: metadataOf(partitions),
    message: { key, value: null },
  });
}

const javaPartitioner = Partitioners.DefaultPartitioner();
const metadataCache = new Map<number, PartitionMetadata[]>();
function metadataOf(partitions: number): PartitionMetadata[] {
  let metadata = metadataCache.get(partitions);
  if (!metadata) {
    metadata = Array.from({ length: partitions }, (_, partitionId) => ({
      partitionErrorCode: 0,
      partitionId,
      leader: 0,
      replicas: [],
      isr: [],
    }));
    metadataCache.set(partitions, metadata);
  }
  return metadata;
}

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
