import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { schemaFor } from '../contracts/registry.ts';
import type { EventEnvelope } from '../envelope.ts';
import { fromKafkaMessage } from '../kafka/cloudEvents.ts';
import { ensureTopics } from '../kafka/topics.ts';
import type { ApplyResult } from './applyOnce.ts';

export type ConsumerStats = { applied: number; duplicates: number; malformed: number; ignored: number };

export type EventHandler = (event: EventEnvelope) => Promise<ApplyResult | 'ignored'>;

export type RunConsumerOptions = {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  topicPartitions: number;
  logger: Logger;
  handle: EventHandler;
};

export type RunningConsumer = { stats: ConsumerStats; stop(): Promise<void> };

/**
 * Consume events one at a time and hand each to `handle`, which applies it through `applyOnce`.
 * The offset is committed only after `handle` resolved, i.e. after its transaction committed:
 * a crash in between redelivers the event, and the processed_events row makes that harmless.
 * A handler that throws (database down, say) stops the partition from advancing; kafkajs
 * retries the message with backoff, so a transient failure never skips an event.
 */
export async function runConsumer(options: RunConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topics, logger, handle } = options;
  const stats: ConsumerStats = { applied: 0, duplicates: 0, malformed: 0, ignored: 0 };

  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, topics, options.topicPartitions);
  } finally {
    await admin.disconnect();
  }

  const consumer: Consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  await consumer.connect();
  // A new group starts at the earliest offset: events published before this consumer first ran
  // are still consumed. (An existing group resumes from its committed offsets.)
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      let event: EventEnvelope;
      try {
        event = fromKafkaMessage(message);
        const schema = schemaFor(event.type, event.schemaversion);
        if (!schema) throw new Error(`unknown event type ${event.type} v${event.schemaversion}`);
        event = { ...event, data: schema.parse(event.data) };
      } catch (err) {
        // Never block the partition on a message that can never be read. (A later issue routes
        // these to a dead-letter topic; for now they are logged and counted.)
        stats.malformed += 1;
        logger.error({ err, topic, partition, offset: message.offset }, 'malformed event skipped');
        return;
      }
      const result = await handle(event);
      if (result === 'applied') stats.applied += 1;
      else if (result === 'duplicate') stats.duplicates += 1;
      else stats.ignored += 1;
      logger.debug({ eventId: event.id, type: event.type, result }, 'event handled');
    },
  });

  return {
    stats,
    // disconnect() lets the current message finish, commits its offset and leaves the group.
    stop: () => consumer.disconnect(),
  };
}
