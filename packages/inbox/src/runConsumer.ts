import { setTimeout as sleep } from 'node:timers/promises';
import type { EventEnvelope } from '@outbox/contracts';
import { fromKafkaMessage, schemaFor } from '@outbox/contracts';
import { backoffDelayMs } from '@outbox/outbox';
import { ensureTopics } from '@outbox/runtime/kafka';
import {
  type Consumer,
  type Kafka,
  type KafkaMessage,
  type Message,
  Partitioners,
  type Producer,
} from 'kafkajs';
import type { Logger } from 'pino';
import { type ChunkResult, EventFailedError } from './applyChunk.ts';
import { deadLetterTopic, toDeadLetterMessage } from './deadLetter.ts';
import { classifyFailure, type Failure } from './failure.ts';

export type ConsumerStats = {
  applied: number;
  duplicates: number;
  ignored: number;
  deadLettered: number;
};

export type HandleResult = ChunkResult;

/** A readable message of a chunk: the event, and where it came from. */
export type ChunkItem = { topic: string; partition: number; message: KafkaMessage; event: EventEnvelope };

/**
 * Apply a chunk of events from one partition, in offset order, and say what happened to each.
 * Throws `EventFailedError` (which event) or any error (the whole chunk); nothing may be kept
 * when it throws, i.e. one transaction.
 */
export type ChunkHandler = (items: ChunkItem[]) => Promise<HandleResult[]>;

/** A partition whose current chunk keeps failing (transiently) and is being retried. */
export type FailingPartition = {
  topic: string;
  partition: number;
  /** Failed attempts in a row at the same offset. */
  failures: number;
  /** When the first of them failed (ms since the epoch). */
  since: number;
  offset: string;
  reason: string;
};

export type RunConsumerOptions = {
  kafka: Kafka;
  /** Consumer group; also the consumer's name in processed_events and dead-letter headers. */
  groupId: string;
  topics: string[];
  topicPartitions: number;
  logger: Logger;
  handleChunk: ChunkHandler;
  /**
   * Runs for the readable events of a chunk BEFORE its transaction and outside any (e.g. calls to
   * a payment provider, idempotent by the event id, whose answers the handler then records).
   * Runs again when the chunk is retried. Throws `EventFailedError` to pin a failure on one event;
   * its failures are classified like the handler's.
   */
  prepare?: (items: ChunkItem[]) => Promise<void>;
  /** At most this many events per transaction (default 200). */
  maxChunk?: number;
  /** Partitions processed at once, each with its own transaction (default 3). */
  partitionsConsumedConcurrently?: number;
  /** Backoff of a transiently failing chunk (default 200 ms doubling to 5 s, full jitter). */
  retry?: { baseMs: number; capMs: number };
  /** Called after a chunk committed, with each event's result. */
  onChunk?: (items: ChunkItem[], results: HandleResult[], seconds: number) => void;
  /** Called after a message went to the dead-letter topic. */
  onDeadLettered?: (topic: string, reason: string) => void;
  /** Called after a chunk failed transiently and will be retried. */
  onRetry?: (topic: string, partition: number, failure: Failure) => void;
  /**
   * Test-only fault point: kill -9 this process right after the first effect commits, before
   * its offset is committed. Proves a redelivery after a crash applies nothing twice.
   */
  killAfterCommit?: boolean;
};

export type RunningConsumer = {
  stats: ConsumerStats;
  /** Partitions whose chunk is failing right now, being retried. */
  failing(): FailingPartition[];
  stop(): Promise<void>;
};

/** Why a message cannot be read as an event we know; such messages are dead-lettered. */
function readEvent(message: KafkaMessage): EventEnvelope {
  return checkEventData(fromKafkaMessage(message));
}

/**
 * The event with its data parsed by the schema of its type and version; throws when there is
 * none or the data does not match. What every handler is given, so a handler typed by its event's
 * data (EventData) can rely on that type.
 */
export function checkEventData(event: EventEnvelope): EventEnvelope {
  const schema = schemaFor(event.type, event.schemaversion);
  if (!schema) throw new Error(`unknown event type or version: ${event.type} v${event.schemaversion}`);
  const parsed = schema.safeParse(event.data);
  if (!parsed.success)
    throw new Error(`invalid ${event.type} v${event.schemaversion}: ${parsed.error.message}`);
  return { ...event, data: parsed.data };
}

/**
 * Consume events in batches and apply them in chunks, one transaction per chunk (`handleChunk`).
 *
 * - Offsets are resolved and committed only after the chunk's transaction committed: a crash in
 *   between redelivers the chunk, and the processed_events rows make that harmless.
 * - A message that can never be read (not a CloudEvent, unknown type or version, invalid data)
 *   goes to `<topic>.dlt` with the reason, and the partition moves on.
 * - A handler failure that will recur on every delivery (failure.ts: a data or constraint error)
 *   dead-letters that one event with the reason; the chunk is re-run without it.
 * - Any other failure rolls the chunk back and retries it with backoff, heartbeating between
 *   attempts; nothing is skipped. The partition is reported by `failing()` meanwhile.
 * - Partitions are processed concurrently, each in offset order: per-key order is kept.
 */
export async function runConsumer(options: RunConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topics, logger, handleChunk } = options;
  const maxChunk = options.maxChunk ?? 200;
  const retry = options.retry ?? { baseMs: 200, capMs: 5000 };
  const stats: ConsumerStats = { applied: 0, duplicates: 0, ignored: 0, deadLettered: 0 };
  const failing = new Map<string, FailingPartition>();

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
  // The caller retries a failed start-up: what it opened is closed first, or every retry leaks.
  let opened: Consumer | undefined;
  const closeAndRethrow = async (err: unknown): Promise<never> => {
    await Promise.allSettled([opened?.disconnect(), producer.disconnect()]);
    throw err;
  };
  const consumer: Consumer = await (async () => {
    opened = kafka.consumer({ groupId, allowAutoTopicCreation: false });
    await opened.connect();
    return opened;
  })().catch(closeAndRethrow);

  /**
   * Acknowledged by the broker before the offset moves on: a crash here redelivers the message,
   * which is dead-lettered again (a duplicate in the DLT, never a loss).
   */
  const deadLetter = async (
    topic: string,
    partition: number,
    letters: { message: KafkaMessage; reason: string }[],
  ) => {
    if (letters.length === 0) return;
    const messages: Message[] = letters.map(({ message, reason }) =>
      toDeadLetterMessage(message, { topic, partition, consumer: groupId }, reason),
    );
    await producer.send({ topic: deadLetterTopic(topic), acks: -1, messages });
    for (const { message, reason } of letters) {
      stats.deadLettered += 1;
      options.onDeadLettered?.(topic, reason);
      logger.warn({ topic, partition, offset: message.offset, reason }, 'message dead-lettered');
    }
  };

  /** One attempt: the prepare steps, then the chunk in one transaction. */
  const attempt = async (items: ChunkItem[]): Promise<HandleResult[]> => {
    await options.prepare?.(items);
    return handleChunk(items);
  };

  type Control = { isRunning(): boolean; isStale(): boolean; heartbeat(): Promise<void> };

  /** Apply one chunk of a partition's batch; false when the consumer stopped or lost the partition. */
  const processChunk = async (
    topic: string,
    partition: number,
    messages: KafkaMessage[],
    control: Control,
  ): Promise<boolean> => {
    const letters: { message: KafkaMessage; reason: string }[] = [];
    const pending: ChunkItem[] = [];
    for (const message of messages) {
      try {
        pending.push({ topic, partition, message, event: readEvent(message) });
      } catch (err) {
        letters.push({ message, reason: (err as Error).message });
      }
    }
    await deadLetter(topic, partition, letters);
    return applyWithRetry(topic, partition, pending, control);
  };

  /** Apply readable events until they are all applied or dead-lettered; false when stopped. */
  const applyWithRetry = async (
    topic: string,
    partition: number,
    items: ChunkItem[],
    control: Control,
  ): Promise<boolean> => {
    const key = `${topic}:${partition}`;
    let pending = items;
    let failures = 0;
    while (pending.length > 0) {
      if (!control.isRunning() || control.isStale()) return false;
      const started = performance.now();
      let results: HandleResult[];
      try {
        results = await attempt(pending);
      } catch (err) {
        const index = err instanceof EventFailedError ? err.index : undefined;
        const failure = classifyFailure(err instanceof EventFailedError ? err.cause : err);
        if (failure.kind === 'deterministic') {
          if (index === undefined && pending.length > 1) {
            // Not pinned on one event (the chunk's own statement, say): find it one at a time.
            for (const item of pending) {
              if (!(await applyWithRetry(topic, partition, [item], control))) return false;
            }
            return true;
          }
          const poison = pending[index ?? 0] as ChunkItem;
          await deadLetter(topic, partition, [{ message: poison.message, reason: failure.reason }]);
          pending = pending.filter((item) => item !== poison);
          continue;
        }
        failures += 1;
        const offset = (pending[index ?? 0] as ChunkItem).message.offset;
        const previous = failing.get(key);
        failing.set(key, {
          topic,
          partition,
          failures,
          since: previous?.since ?? Date.now(),
          offset,
          reason: failure.reason,
        });
        options.onRetry?.(topic, partition, failure);
        const delayMs = backoffDelayMs(failures, retry.baseMs, retry.capMs);
        logger.warn(
          { topic, partition, offset, failures, delayMs, err, reason: failure.reason },
          'chunk failed; rolled back, retrying',
        );
        await sleep(delayMs);
        await control.heartbeat();
        continue;
      }
      failing.delete(key);
      if (options.killAfterCommit && results.includes('applied')) process.kill(process.pid, 'SIGKILL');
      for (const result of results) {
        if (result === 'applied') stats.applied += 1;
        else if (result === 'duplicate') stats.duplicates += 1;
        else stats.ignored += 1;
      }
      options.onChunk?.(pending, results, (performance.now() - started) / 1000);
      return true;
    }
    failing.delete(key);
    return true;
  };

  // A new group starts at the earliest offset: events published before this consumer first ran
  // are still consumed. (An existing group resumes from its committed offsets.)
  await consumer.subscribe({ topics, fromBeginning: true }).catch(closeAndRethrow);
  await consumer
    .run({
      eachBatchAutoResolve: false,
      // Commit whenever an offset was resolved, i.e. after every chunk (commitOffsetsIfNecessary).
      autoCommitThreshold: 1,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 3,
      eachBatch: async ({
        batch,
        resolveOffset,
        heartbeat,
        commitOffsetsIfNecessary,
        isRunning,
        isStale,
      }) => {
        const { topic, partition } = batch;
        const control = { isRunning, isStale, heartbeat };
        try {
          for (let start = 0; start < batch.messages.length; start += maxChunk) {
            const chunk = batch.messages.slice(start, start + maxChunk);
            if (!(await processChunk(topic, partition, chunk, control))) return;
            resolveOffset((chunk[chunk.length - 1] as KafkaMessage).offset);
            await commitOffsetsIfNecessary();
            await heartbeat();
          }
        } catch (err) {
          // A heartbeat refused (rebalance) or a dead letter not sent: kafkajs takes over, and the
          // partition is no longer being retried here.
          failing.delete(`${topic}:${partition}`);
          throw err;
        } finally {
          // Stopped, or rebalanced away: this process no longer retries the partition.
          if (!isRunning() || isStale()) failing.delete(`${topic}:${partition}`);
        }
      },
    })
    .catch(closeAndRethrow);

  return {
    stats,
    failing: () => [...failing.values()],
    // disconnect() lets the current chunk finish (a retrying one gives up at once, unresolved),
    // commits the resolved offsets and leaves the group.
    stop: async () => {
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}
