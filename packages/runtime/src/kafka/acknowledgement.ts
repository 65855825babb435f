import type { PartitionAck, PartitionedMessages } from './ports.ts';

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
 * What makes "acknowledged" mean "in the log", whichever client sent the batch: every partition
 * the batch wrote to is among the partitions the broker answered for without an error. A client
 * can resolve a send without having written a partition whose leader moved while it was retrying
 * (kafkajs 2.2.4: tulios/kafkajs#1303; docs/dependencies.md has what we measured), and a relay that
 * marked those rows published would lose their events. Throws UnacknowledgedPartitionsError instead.
 */
export function checkAcknowledged(
  topicMessages: PartitionedMessages[],
  acks: PartitionAck[],
): PartitionAck[] {
  const acknowledged = new Set(acks.map((ack) => `${ack.topic}[${ack.partition}]`));
  const written = new Set(
    topicMessages.flatMap(({ topic, messages }) =>
      messages.map((message) => `${topic}[${message.partition}]`),
    ),
  );
  const missing = [...written].filter((partition) => !acknowledged.has(partition));
  if (missing.length > 0) throw new UnacknowledgedPartitionsError(missing);
  return acks;
}

/**
 * A send a client failed, in the client-neutral terms the relay's classifier reads
 * (apps/relay/src/engine/publishErrors.ts): `type`, the Kafka protocol error the broker answered
 * (e.g. MESSAGE_TOO_LARGE), and `unavailable`, when no broker could be reached or the partition's
 * leader is moving. kafkajs' own errors carry the same facts under its names; the other client's
 * are translated into this one (platformatic/producer.ts).
 */
export class KafkaSendError extends Error {
  override readonly name = 'KafkaSendError';
  readonly type: string | undefined;
  readonly unavailable: boolean;
  constructor(cause: Error, { type, unavailable }: { type?: string; unavailable: boolean }) {
    super(cause.message, { cause });
    this.type = type;
    this.unavailable = unavailable;
  }
}
