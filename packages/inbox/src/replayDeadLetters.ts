import type {
  ConsumedMessage,
  EventProducer,
  KafkaClient,
  PartitionBatch,
  TopicAdmin,
} from '@outbox/runtime/kafka';
import { type Logger, pino } from 'pino';
import { fromDeadLetterMessage } from './deadLetter.ts';

/** One partition of the dead-letter topic: where the replay started, where it stopped, what it left. */
export type PartitionReplay = {
  partition: number;
  /** The first offset to replay: the group's committed offset, or the log start if retention removed it. */
  from: number;
  /** The high-water mark when the replay started: it replays offsets below it, never beyond. */
  upTo: number;
  /** Where the group stands now (committed): `upTo` unless time ran out first. */
  reached: number;
  /** Letters at or after `reached` when the replay ended: those dead-lettered meanwhile, and any not reached in time. */
  left: number;
};

export type ReplayResult = {
  replayed: number;
  byTopic: Record<string, number>;
  partitions: PartitionReplay[];
  /** False when `timeoutMs` ran out before every partition reached its `upTo`. */
  complete: boolean;
};

/**
 * Re-produce the letters on a dead-letter topic to the topic they came from, without their
 * `dlt_*` headers, after the cause was fixed (a consumer now knows the schema version, say).
 *
 * It works by offset, per partition: from the group's committed offset (or the log start, when
 * retention deleted the letters before it) up to the high-water mark read at the start. Letters
 * dead-lettered while it runs lie beyond that mark: they are neither replayed nor committed, so
 * the next run replays them. It commits how far it got under `groupId`, and stops after
 * `timeoutMs` whatever happens (the result then says `complete: false` and what it left).
 *
 * Every consumer group of a topic dead-letters its own copy of a bad message; the original is
 * replayed once (by `dlt_topic`/`dlt_partition`/`dlt_offset`), since every group reads it again
 * from the topic anyway. Replaying each copy would multiply the message by the number of groups.
 */
export async function replayDeadLetters(
  kafka: KafkaClient,
  deadLetterTopic: string,
  groupId: string,
  { timeoutMs = 60_000, logger = pino({ level: 'silent' }) }: { timeoutMs?: number; logger?: Logger } = {},
): Promise<ReplayResult> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const plan = await planReplay(admin, deadLetterTopic, groupId);
    const result: ReplayResult = { replayed: 0, byTopic: {}, partitions: [], complete: true };
    const reached = new Map([...plan].map(([partition, range]) => [partition, range.from]));
    if ([...plan.values()].some((range) => range.from < range.upTo))
      result.complete = await replayRanges(
        kafka,
        { topic: deadLetterTopic, groupId, logger },
        { plan, reached, result },
        timeoutMs,
      );
    const ends = await admin.topicOffsets(deadLetterTopic);
    for (const end of ends) {
      const range = plan.get(end.partition) ?? { from: 0, upTo: 0 };
      const at = reached.get(end.partition) ?? range.from;
      result.partitions.push({
        partition: end.partition,
        ...range,
        reached: at,
        left: Number(end.high) - at,
      });
    }
    result.partitions.sort((a, b) => a.partition - b.partition);
    return result;
  } finally {
    await admin.disconnect();
  }
}

type Range = { from: number; upTo: number };

/** Per partition: from the committed offset (or the log start, if later) up to today's high-water mark. */
async function planReplay(admin: TopicAdmin, topic: string, groupId: string): Promise<Map<number, Range>> {
  const ends = await admin.topicOffsets(topic);
  const [committed] = await whileCoordinatorMoves(() => admin.committedOffsets(groupId, [topic]));
  const position = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
  return new Map(
    ends.map((end) => {
      // -1: the group never committed on this partition.
      const from = Math.max(position.get(end.partition) ?? -1, Number(end.low));
      return [end.partition, { from, upTo: Math.max(from, Number(end.high)) }] as const;
    }),
  );
}

/**
 * An admin may not retry an offset fetch that reaches the group coordinator while it loads or
 * moves (a broker just started or restarted; kafkajs' does not): retry for a few seconds, as a
 * consumer would.
 */
async function whileCoordinatorMoves<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      const retriable = (err as { retriable?: boolean }).retriable === true;
      if (!retriable || attempt >= 20) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

type Progress = { plan: Map<number, Range>; reached: Map<number, number>; result: ReplayResult };

/** True when every partition got to its `upTo`. */
const allReached = ({ plan, reached }: Progress) =>
  [...plan].every(([partition, range]) => (reached.get(partition) ?? 0) >= range.upTo);

/**
 * Consume each partition from its `from` to its `upTo`, replaying each original once, and commit
 * the offsets reached (`reached`, updated as it goes) after each batch. True when every partition
 * got to `upTo`.
 */
async function replayRanges(
  kafka: KafkaClient,
  { topic, groupId, logger }: { topic: string; groupId: string; logger: Logger },
  progress: Progress,
  timeoutMs: number,
): Promise<boolean> {
  // The same acknowledged producer as the relay's: a replayed event is in the log before its offset is committed.
  const producer = kafka.producer();
  let finished = () => {};
  const stopped = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const timer = setTimeout(finished, timeoutMs);
  try {
    await producer.connect();
    // A committed offset that retention deleted is out of range: the member then starts at the
    // log start, which is also where a group that never committed starts.
    const member = await kafka.groupMember({
      groupId,
      topics: [topic],
      heartbeatIntervalMs: 3000,
      partitionsConsumedConcurrently: 1,
      eachBatch: batchReplayer(producer, topic, progress, finished),
      onReplaced: () => {},
      logger,
    });
    try {
      await stopped;
    } finally {
      await member.stopWatching();
      await member.leave();
    }
  } finally {
    clearTimeout(timer);
    await producer.disconnect();
  }
  return allReached(progress);
}

/**
 * What the member does with a batch: replay each letter below its partition's `upTo` (each
 * original once, by `dlt_topic`/`dlt_partition`/`dlt_offset`), then commit the offsets reached.
 * Only those are committed, never what the member resolved: nothing beyond the high-water mark.
 */
function batchReplayer(
  producer: EventProducer,
  topic: string,
  progress: Progress,
  onAllReached: () => void,
): (batch: PartitionBatch) => Promise<void> {
  const { plan, reached, result } = progress;
  const seen = new Set<string>();
  const replayOne = async (partition: number, message: ConsumedMessage) => {
    const offset = Number(message.offset);
    const range = plan.get(partition);
    if (!range || offset >= range.upTo || offset < (reached.get(partition) ?? 0)) return;
    const { topic: origin, message: original } = fromDeadLetterMessage(message);
    const key = ['dlt_topic', 'dlt_partition', 'dlt_offset'].map((name) => message.headers?.[name]).join(':');
    if (!seen.has(key)) {
      seen.add(key);
      // Back to the partition it was read from (dlt_partition), where the rest of its key's events are.
      const partition = Number(message.headers?.dlt_partition?.toString());
      await producer.send([{ topic: origin, messages: [{ ...original, partition }] }]);
      result.replayed += 1;
      result.byTopic[origin] = (result.byTopic[origin] ?? 0) + 1;
    }
    reached.set(partition, offset + 1);
  };
  return async (batch) => {
    for (const message of batch.batch.messages) {
      if (!batch.isRunning() || batch.isStale()) break;
      await replayOne(batch.batch.partition, message);
      batch.resolveOffset(message.offset);
    }
    const partitions = [...reached].map(([partition, offset]) => ({ partition, offset: String(offset) }));
    await batch.commitOffsetsIfNecessary({ topics: [{ topic, partitions }] });
    if (allReached(progress)) onAllReached();
  };
}
