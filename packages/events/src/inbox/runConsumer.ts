import { type Consumer, type Kafka, type KafkaMessage, Partitioners, type Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { schemaFor } from '../contracts/registry.ts';
import type { EventEnvelope } from '../envelope.ts';
import { fromKafkaMessage } from '../kafka/cloudEvents.ts';
import { ensureTopics } from '../kafka/topics.ts';
import type { ApplyResult } from './applyOnce.ts';
import { deadLetterTopic, toDeadLetterMessage } from './deadLetter.ts';

export type ConsumerStats = {
  applied: number;
  duplicates: number;
  ignored: number;
  deadLettered: number;
};

export type HandleResult = ApplyResult | 'ignored';
export type EventHandler = (event: EventEnvelope) => Promise<HandleResult>;

export type RunConsumerOptions = {
  kafka: Kafka;
  /** Consumer group; also the consumer's name in processed_events and dead-letter headers. */
  groupId: string;
  topics: string[];
  topicPartitions: number;
  logger: Logger;
  handle: EventHandler;
  /** Called after each handled message, e.g. to record metrics. */
  onHandled?: (event: EventEnvelope, result: HandleResult, seconds: number) => void;
  /** Called after a message went to the dead-letter topic. */
  onDeadLettered?: (topic: string, reason: string) => void;
  /**
   * Test-only fault point: kill -9 this process right after the first effect commits, before
   * its offset is committed. Proves a redelivery after a crash applies nothing twice.
   */
  killAfterCommit?: boolean;
};

export type RunningConsumer = { stats: ConsumerStats; stop(): Promise<void> };

/** Why a message cannot be read as an event we know; such messages are dead-lettered. */
function readEvent(message: KafkaMessage): EventEnvelope {
  const event = fromKafkaMessage(message);
  const schema = schemaFor(event.type, event.schemaversion);
  if (!schema) throw new Error(`unknown event type or version: ${event.type} v${event.schemaversion}`);
  const parsed = schema.safeParse(event.data);
  if (!parsed.success)
    throw new Error(`invalid ${event.type} v${event.schemaversion}: ${parsed.error.message}`);
  return { ...event, data: parsed.data };
}

/**
 * Consume events one at a time and hand each to `handle`, which applies it through `applyOnce`.
 *
 * - The offset is committed only after `handle` resolved, i.e. after its transaction committed:
 *   a crash in between redelivers the event, and the processed_events row makes that harmless.
 * - A message that can never be read (not a CloudEvent, unknown type or version, invalid data)
 *   goes to `<topic>.dlt` with the reason, and the partition moves on.
 * - A handler that throws (database down, say) does not advance the partition: kafkajs retries
 *   the message with backoff, restarting the consumer if needed, so it is never skipped.
 */
export async function runConsumer(options: RunConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topics, logger, handle } = options;
  const stats: ConsumerStats = { applied: 0, duplicates: 0, ignored: 0, deadLettered: 0 };

  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, [...topics, ...topics.map(deadLetterTopic)], options.topicPartitions);
  } finally {
    await admin.disconnect();
  }

  const producer: Producer = kafka.producer({
    idempotent: true,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner, // as the relay's (apps/relay/src/publisher.ts)
  });
  await producer.connect();
  const consumer: Consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  await consumer.connect();
  // A new group starts at the earliest offset: events published before this consumer first ran
  // are still consumed. (An existing group resumes from its committed offsets.)
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      let event: EventEnvelope;
      try {
        event = readEvent(message);
      } catch (err) {
        const reason = (err as Error).message;
        // Acknowledged by the broker before the offset moves on: a crash here redelivers the
        // message, which is dead-lettered again (a duplicate in the DLT, never a loss).
        await producer.send({
          topic: deadLetterTopic(topic),
          acks: -1,
          messages: [toDeadLetterMessage(message, { topic, partition, consumer: groupId }, reason)],
        });
        stats.deadLettered += 1;
        options.onDeadLettered?.(topic, reason);
        logger.error(
          { topic, partition, offset: message.offset, reason },
          'unreadable message dead-lettered',
        );
        return;
      }
      const started = performance.now();
      const result = await handle(event);
      if (options.killAfterCommit && result === 'applied') process.kill(process.pid, 'SIGKILL');
      if (result === 'applied') stats.applied += 1;
      else if (result === 'duplicate') stats.duplicates += 1;
      else stats.ignored += 1;
      options.onHandled?.(event, result, (performance.now() - started) / 1000);
      logger.debug({ eventId: event.id, type: event.type, result }, 'event handled');
    },
  });

  return {
    stats,
    // disconnect() lets the current message finish, commits its offset and leaves the group.
    stop: async () => {
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}
