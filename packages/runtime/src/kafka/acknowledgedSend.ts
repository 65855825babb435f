import {
  type Message,
  Partitioners,
  type PartitionMetadata,
  type Producer,
  type RecordMetadata,
} from 'kafkajs';

/** Messages for one topic, each with the partition it goes to set explicitly. */
export type PartitionedMessages = { topic: string; messages: (Message & { partition: number })[] };

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

/** The broker's answer to a batch does not cover every partition the batch wrote to. */
export class UnacknowledgedPartitionsError extends Error {
  override readonly name = 'UnacknowledgedPartitionsError';
  readonly retriable = true;
  readonly partitions: string[];
  constructor(partitions: string[]) {
    super(`Kafka did not acknowledge ${partitions.join(', ')}; the batch must be sent again`);
    this.partitions = partitions;
  }
}

/**
 * sendBatch with acks=all, then the check that makes "acknowledged" mean "in the log": every
 * partition the batch wrote to is in the answer, without an error. kafkajs 2.2.4 can resolve a
 * batch without having written a partition whose leader moved while it was retrying
 * (tulios/kafkajs#1303; docs/dependencies.md has what we measured), and a relay that marked those
 * rows published would lose their events. Throws UnacknowledgedPartitionsError instead.
 */
export async function sendAcknowledged(
  producer: Producer,
  topicMessages: PartitionedMessages[],
): Promise<RecordMetadata[]> {
  const answers = await producer.sendBatch({ topicMessages, acks: -1 });
  const acknowledged = new Set(
    answers
      .filter((answer) => answer.errorCode === 0)
      .map((answer) => `${answer.topicName}[${answer.partition}]`),
  );
  const written = new Set(
    topicMessages.flatMap(({ topic, messages }) =>
      messages.map((message) => `${topic}[${message.partition}]`),
    ),
  );
  const missing = [...written].filter((partition) => !acknowledged.has(partition));
  if (missing.length > 0) throw new UnacknowledgedPartitionsError(missing);
  return answers;
}
