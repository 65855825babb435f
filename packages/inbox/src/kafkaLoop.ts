import {
  type ConsumedMessage,
  ensureTopics,
  type GroupMember,
  type KafkaClient,
  type PartitionBatch,
  type TopicLayout,
} from '@outbox/runtime/kafka';
import type { Logger } from 'pino';
import { type ChunkHandler, decodeChunk } from './chunk.ts';
import {
  ChunkOutcomes,
  type ChunkOutcomesDeps,
  type ConsumerStats,
  type FailingPartition,
} from './chunkOutcomes.ts';
import { combineChunks } from './combinedChunks.ts';
import { deadLetterTopic } from './deadLetter.ts';
import { DEFAULT_COMMIT_INTERVAL_MS, OffsetCommits } from './offsetCommits.ts';

export type RunConsumerOptions = {
  /** The client (KAFKA_CLIENT) whose group member, producer and admin the loop uses. */
  client: KafkaClient;
  /** Consumer group; also the consumer's name in processed_events and dead-letter headers. */
  groupId: string;
  topics: string[];
  topicLayout: TopicLayout;
  logger: Logger;
  /** The chunk step: applies a chunk in one transaction (applyChunk.ts's chunkStep). */
  handleChunk: ChunkHandler;
  /** At most this many events per transaction (default 200). */
  maxChunk?: number;
  /**
   * Partitions processed at once, each with its own transaction (default 3); with `chunkLingerMs`,
   * sharing theirs (default: every partition of the topics).
   */
  partitionsConsumedConcurrently?: number;
  /** Backoff of a transiently failing chunk (default 200 ms doubling to 5 s, full jitter). */
  retry?: { baseMs: number; capMs: number };
  /** The group's session timeout (default 30 s, kafkajs's): a member silent this long is dropped. */
  sessionTimeoutMs?: number;
  /** How often this member heartbeats, also while a chunk runs (default 3 s, kafkajs's). */
  heartbeatIntervalMs?: number;
  /**
   * Resolved offsets are committed this often while there are new ones (default
   * DEFAULT_COMMIT_INTERVAL_MS, 1 s), so also within this long after the stream goes idle; a crash
   * redelivers at most this much.
   */
  commitIntervalMs?: number;
  /**
   * The chunks of the member's partitions that come together are applied in one transaction, and
   * the member fetches again no sooner than this long after such a lot began (combinedChunks.ts);
   * 0 or unset: each chunk in its own transaction, fetched again at once.
   */
  chunkLingerMs?: number;
  /**
   * With `chunkLingerMs`, how long a chunk waits for the chunks of the other partitions of its
   * fetch before they are applied together (default CHUNK_GATHER_MS).
   */
  chunkGatherMs?: number;
  /**
   * Resolves once the database's standby holds every transaction committed so far; throws when it
   * does not within its bound (runtime's standbyWait.ts). Offsets are committed only after it, so
   * a failover to the standby never loses an effect whose event Kafka considers consumed.
   */
  untilStandbyHolds?: () => Promise<void>;
  /** Counts dead letters and retries (consumerMetrics.ts); none when left out. */
  metrics?: ChunkOutcomesDeps['metrics'];
};

export type RunningConsumer = {
  stats: ConsumerStats;
  /** Partitions whose chunk is failing right now, being retried. */
  failing(): FailingPartition[];
  /** Why this process's group member is not consuming (crashed, given up, joining), if it is not. */
  memberProblem(): string | undefined;
  stop(): Promise<void>;
};

/**
 * The Kafka loop: fetch batches, cut them into chunks, hand each chunk to `handleChunk` (one
 * transaction), then resolve its offsets and heartbeat; the resolved offsets are committed every
 * `commitIntervalMs` (offsetCommits.ts), on stop and when a batch fails.
 *
 * - Offsets are resolved only after the chunk's transaction committed, and only resolved offsets
 *   are committed: a crash before the commit redelivers the chunk (at most an interval's worth),
 *   and the processed_events rows make that harmless.
 * - A message that can never be read goes to `<topic>.dlt` with the reason, and the partition
 *   moves on; what becomes of a chunk that fails is chunkOutcomes.ts's to say.
 * - The member heartbeats while a chunk runs, however long it takes (a catch-up of many slow
 *   events), so the group does not drop it and redeliver a chunk that committed: kafkajs's on a
 *   timer (kafkajs/groupConsumer.ts), @platformatic/kafka's on its own.
 * - Partitions are processed concurrently, each in offset order: per-key order is kept.
 */
export async function runConsumer(options: RunConsumerOptions): Promise<RunningConsumer> {
  const { client, groupId, topics, logger } = options;
  const deadLetterPartitions = await ensureConsumerTopics(client, topics, options.topicLayout);
  // Dead letters go through the same acknowledged producer as the relay's events.
  const producer = client.producer();
  await producer.connect();
  const commits = new OffsetCommits(
    options.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS,
    logger,
    options.untilStandbyHolds,
  );
  const maxChunk = options.maxChunk ?? 200;
  const { handleChunk, concurrency } = chunkSharing(options, maxChunk);
  const outcomes = new ChunkOutcomes({
    groupId,
    producer,
    deadLetterPartitions,
    handleChunk,
    logger,
    retry: options.retry ?? { baseMs: 200, capMs: 5000 },
    metrics: options.metrics,
  });
  const batches = { outcomes, commits, maxChunk };

  let member: GroupMember;
  try {
    member = await client.groupMember({
      groupId,
      topics,
      ...(options.sessionTimeoutMs ? { sessionTimeoutMs: options.sessionTimeoutMs } : {}),
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 3000,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? concurrency,
      eachBatch: (batch) => consumeBatch(batch, batches, logger),
      onReplaced: () => commits.forget(),
      logger,
    });
  } catch (err) {
    // The caller retries a failed start-up: what it opened is closed first, or every retry leaks.
    commits.close();
    await producer.disconnect().catch(() => undefined);
    throw err;
  }

  return {
    stats: outcomes.stats,
    failing: () => outcomes.failing(),
    memberProblem: () => member.problem(),
    // leave() lets the current chunk finish (a retrying one gives up at once, unresolved) and
    // leaves the group; the resolved offsets are committed before it leaves (stopping()).
    stop: async () => {
      await member.stopWatching();
      // A commit refused on the way out (the coordinator moving) must not keep the member in the group.
      await commits
        .stopping()
        .catch((err: unknown) => logger.warn({ err }, 'offset commit on stop refused; redelivered later'));
      await member.leave();
      await producer.disconnect();
    },
  };
}

/**
 * How long a chunk waits for the other partitions' chunks of its fetch: a client hands them over
 * within the same moment, so a few milliseconds find them on a busy machine too.
 */
export const CHUNK_GATHER_MS = 5;

/** The chunk step the partitions use, and how many of them run at once (default). */
function chunkSharing(options: RunConsumerOptions, maxChunk: number) {
  const lingerMs = options.chunkLingerMs;
  if (!lingerMs) return { handleChunk: options.handleChunk, concurrency: 3 };
  const gatherMs = options.chunkGatherMs ?? CHUNK_GATHER_MS;
  return {
    handleChunk: combineChunks(options.handleChunk, { lingerMs, gatherMs, maxEvents: maxChunk }),
    // Combined chunks share a transaction, so every partition may wait in the lot at once: the two
    // replies of an order are on the same partition number of two topics, which a limit of 3
    // would otherwise rarely let in together.
    concurrency: options.topicLayout.partitions * options.topics.length,
  };
}

/** The topics and their dead-letter topics, created if missing; answers the dead-letter topics' partition counts. */
async function ensureConsumerTopics(
  client: KafkaClient,
  topics: string[],
  layout: TopicLayout,
): Promise<Map<string, number>> {
  const admin = client.admin();
  await admin.connect();
  try {
    const deadLetterTopics = topics.map(deadLetterTopic);
    await ensureTopics(admin, [...topics, ...deadLetterTopics], layout);
    return await admin.partitionCounts(deadLetterTopics);
  } finally {
    await admin.disconnect();
  }
}

type Batches = { outcomes: ChunkOutcomes; commits: OffsetCommits; maxChunk: number };

/** One partition's batch, chunk after chunk: decode, apply, then resolve the offsets. */
async function consumeBatch(
  payload: PartitionBatch,
  { outcomes, commits, maxChunk }: Batches,
  logger: Logger,
) {
  const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
  const where = { topic: batch.topic, partition: batch.partition };
  const control = { isRunning, isStale, heartbeat };
  const { commitOffsetsIfNecessary, uncommittedOffsets } = payload;
  commits.remember({ commitOffsetsIfNecessary, uncommittedOffsets }); // not the payload: it holds the batch
  // A failed batch makes the member read again from the committed offsets (offsetCommits.ts).
  if (commits.failedOver)
    throw new Error('the database failed over: consuming again from the committed offsets');
  try {
    for (let start = 0; start < batch.messages.length; start += maxChunk) {
      const messages = batch.messages.slice(start, start + maxChunk);
      const { items, unreadable } = decodeChunk(where.topic, where.partition, messages);
      await outcomes.deadLetter(where, unreadable);
      const settled = await outcomes.settle(where, items, control);
      if (!settled) return;
      resolveOffset((messages[messages.length - 1] as ConsumedMessage).offset);
      await commits.afterChunk(isRunning());
      // Throws when the group rebalances, or (kafkajs) when the coordinator is gone: the member rejoins.
      await heartbeat();
    }
  } catch (err) {
    // A heartbeat refused (rebalance) or a dead letter not sent: the client takes over, and the
    // partition is no longer being retried here. What was applied is committed first, as
    // kafkajs's own autoCommit does: a rebalance would otherwise drop the resolved offsets and
    // the next owner re-read them. (A generation already fenced refuses the commit: redelivered.)
    outcomes.forget(where);
    await commits.commitNow().catch((commitErr: unknown) => {
      logger.debug({ err: commitErr }, 'offset commit after a failed batch refused');
    });
    throw err;
  } finally {
    // Stopped, or rebalanced away: this process no longer retries the partition.
    if (!isRunning() || isStale()) outcomes.forget(where);
  }
}
