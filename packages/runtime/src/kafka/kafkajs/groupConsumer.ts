import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { CONSUMER_RETRY } from '../clientOptions.ts';
import type { GroupMember, GroupMemberOptions, PartitionBatch } from '../ports.ts';
import { asRejoinIfCoordinatorLost } from './coordinatorLoss.ts';
import { type StartMember, superviseMember } from './groupMember.ts';
import type { CommitOutcomes } from './memberWatchdog.ts';

/**
 * The kafkajs adapter of the project's group member (GroupMember, ports.ts): a kafkajs consumer
 * running `eachBatch` with its offsets resolved and committed by the loop (autoCommit off),
 * supervised by groupMember.ts, which replaces it when kafkajs gives up on it.
 */
export async function kafkajsGroupMember(kafka: Kafka, options: GroupMemberOptions): Promise<GroupMember> {
  const { heartbeatIntervalMs, onReplaced, logger } = options;
  const member = await superviseMember(memberStarter(kafka, options), {
    heartbeatIntervalMs,
    onReplaced,
    logger,
  });
  return {
    problem: () => member.problem(),
    stopWatching: () => member.stopWatching(),
    // kafkajs's disconnect lets the batches in progress finish, then leaves the group.
    leave: () => member.current().disconnect(),
  };
}

/** A new kafkajs consumer in the group, subscribed and running; what it opened is closed if it fails. */
function memberStarter(kafka: Kafka, options: GroupMemberOptions): StartMember {
  const { groupId, topics, heartbeatIntervalMs, logger } = options;
  return async (watch, commits) => {
    const consumer = kafka.consumer({
      groupId,
      allowAutoTopicCreation: false,
      heartbeatInterval: heartbeatIntervalMs,
      retry: CONSUMER_RETRY,
      ...(options.sessionTimeoutMs ? { sessionTimeout: options.sessionTimeoutMs } : {}),
    });
    // Stopped, or crashed and about to be restarted with a new runner: its commit functions are gone.
    consumer.on(consumer.events.STOP, () => options.onReplaced());
    watch(consumer);
    try {
      await consumer.connect();
      // A new group starts at the earliest offset: events published before this consumer first ran
      // are still consumed. (An existing group resumes from its committed offsets.)
      await consumer.subscribe({ topics, fromBeginning: true });
      await consumer.run({
        eachBatchAutoResolve: false,
        // With autoCommit on, kafkajs commits after every batch whatever its interval setting (its
        // runner.js): at a low rate, one OffsetCommit per event. The loop commits instead.
        autoCommit: false,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
        eachBatch: (payload) =>
          heartbeatWhile(payload.heartbeat, heartbeatIntervalMs, logger, () =>
            options.eachBatch(partitionBatch(payload, commits)),
          ),
      });
      return consumer;
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
  };
}

/**
 * kafkajs's payload as the loop's PartitionBatch. A heartbeat refused because the coordinator is
 * gone becomes an error kafkajs answers by rejoining at once, which finds the new coordinator
 * (coordinatorLoss.ts). Not the payload itself: the loop keeps the commit functions, not the batch.
 */
function partitionBatch(payload: EachBatchPayload, commits: CommitOutcomes): PartitionBatch {
  const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
  const { commitOffsetsIfNecessary, uncommittedOffsets } = payload;
  return {
    batch: { topic: batch.topic, partition: batch.partition, messages: batch.messages },
    resolveOffset,
    heartbeat: () =>
      heartbeat().catch((err: unknown) => {
        throw asRejoinIfCoordinatorLost(err);
      }),
    isRunning,
    isStale,
    uncommittedOffsets,
    // With offsets given, kafkajs commits them unconditionally (its runner.js). How each commit
    // ended tells the watchdog whether the member is stuck on a coordinator that moved.
    commitOffsetsIfNecessary: (offsets) =>
      commitOffsetsIfNecessary(offsets).then(
        () => commits.committed(),
        (err: unknown) => {
          commits.refused(err);
          throw err;
        },
      ),
  };
}

/**
 * kafkajs heartbeats only when asked; a batch that runs longer than the session timeout would
 * get this member dropped from the group, its partitions reassigned and the committed chunks
 * redelivered. So heartbeat on a timer while the batch runs (kafkajs sends at most one per
 * interval). A refusal here is only logged: the loop's heartbeat after each chunk meets it again
 * and hands it to kafkajs, which rejoins.
 */
async function heartbeatWhile<T>(
  heartbeat: () => Promise<void>,
  heartbeatIntervalMs: number,
  logger: Logger,
  work: () => Promise<T>,
): Promise<T> {
  const timer = setInterval(() => {
    heartbeat().catch((err: unknown) => logger.debug({ err }, 'heartbeat during a chunk refused'));
  }, heartbeatIntervalMs / 2);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
