import {
  type ConsumedMessage,
  type MessageContent,
  type MessageHeaders,
  type PartitionedMessages,
  partitionOf,
} from '@outbox/runtime/kafka';

/** Messages a consumer cannot read go to `<topic>.dlt`, next to the topic they came from. */
export function deadLetterTopic(topic: string): string {
  return `${topic}.dlt`;
}

export type DeadLetterSource = { topic: string; partition: number; consumer: string };

/**
 * The original message, untouched (key, value, headers), plus `dlt_*` headers saying why it was
 * refused and where it came from, so it can be inspected, fixed and replayed to `dlt_topic`.
 */
export function toDeadLetterMessage(
  message: ConsumedMessage,
  source: DeadLetterSource,
  reason: string,
): MessageContent {
  const headers: MessageHeaders = {
    ...message.headers,
    dlt_reason: reason.slice(0, 1000),
    dlt_topic: source.topic,
    dlt_partition: String(source.partition),
    dlt_offset: message.offset,
    dlt_consumer: source.consumer,
    dlt_time: new Date().toISOString(),
  };
  return { key: message.key, value: message.value, headers };
}

/**
 * Dead letters on their topic's partitions, by key as the relay places events (partitionOf), so
 * the acknowledged producer knows which partitions must acknowledge them. A message without a key
 * goes to partition 0.
 */
export function toDeadLetterBatch(
  topic: string,
  messages: MessageContent[],
  partitions: Map<string, number>,
): PartitionedMessages {
  const count = partitions.get(topic);
  if (count === undefined) throw new Error(`the partitions of ${topic} are not known; was it created?`);
  return {
    topic,
    messages: messages.map((message) => ({
      ...message,
      partition: message.key ? partitionOf(message.key, count) : 0,
    })),
  };
}

/** Strip the `dlt_*` headers again, for a replay to the original topic. */
export function fromDeadLetterMessage(message: ConsumedMessage): { topic: string; message: MessageContent } {
  const headers: MessageHeaders = {};
  let topic: string | undefined;
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (name === 'dlt_topic') topic = value?.toString();
    else if (!name.startsWith('dlt_') && value !== undefined) headers[name] = value;
  }
  if (!topic) throw new Error(`dead-letter message at offset ${message.offset} has no dlt_topic header`);
  return { topic, message: { key: message.key, value: message.value, headers } };
}
