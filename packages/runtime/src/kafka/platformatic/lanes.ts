import type { Message } from '@platformatic/kafka';
import type { ConsumedMessage, GroupMemberOptions, PartitionBatch, TopicPartitionOffsets } from '../ports.ts';
import type { FencedConsumer } from './fencedConsumer.ts';

type Bytes = Buffer | undefined;
type BytesMessage = Message<Bytes, Bytes, Bytes, Bytes>;

/** At most this many messages of one partition handed to the loop at once (its chunks cut them further). */
const MAX_BATCH = 500;
/** Messages held unprocessed across all partitions before the stream is paused, and resumed at half. */
const HIGH_WATER = 5_000;

/** `tenure` counts the times the partition was taken away: a batch cut before is stale. */
type Lane = { topic: string; partition: number; queue: BytesMessage[]; running: boolean; tenure: number };
/** The part of the client's messages stream the lanes steer: its flow, and where it fetches each partition next. */
type Stream = { pause(): void; resume(): void; readonly offsetsToFetch: Map<string, bigint> };
type Resolved = { offset: bigint; leaderEpoch: number; committed: boolean };

/**
 * @platformatic/kafka gives one stream of messages from every partition this member holds; the
 * loop wants kafkajs's shape, a batch of one partition at a time, several partitions at once, each
 * in offset order. A lane per partition queues its messages and hands them over one batch at a
 * time; `partitionsConsumedConcurrently` lanes run at once. The stream is paused while too many
 * messages wait, so a slow database does not fill the memory.
 *
 * A rebalance keeps what waits on the partitions this member still holds: the stream then fetches
 * them again from the committed offsets (its committed mode), behind what waits, so whatever comes
 * twice comes in order and is skipped as a duplicate. A partition taken away loses what waits, and
 * a batch of it still running is stale, so the loop stops applying it. Every position the stream
 * holds is forgotten at each rebalance, so it starts each partition from the committed offset, or
 * from the earliest when the group never committed one, and the answer of a fetch sent before the
 * rebalance is dropped (fencedConsumer.ts), so the stream never moves past messages this member
 * fetched and dropped.
 */
export class Lanes {
  readonly #lanes = new Map<string, Lane>();
  readonly #resolved = new Map<string, Resolved & { topic: string; partition: number }>();
  readonly #consumer: FencedConsumer;
  readonly #options: GroupMemberOptions;
  readonly #stream: Stream;
  readonly #onFailure: (err: unknown) => void;
  readonly #idle = new Set<() => void>();
  #queued = 0;
  #active = 0;
  #running = true;
  /** The partitions held when reassigned last looked, sorted and joined. */
  #heldKey = '';

  constructor(
    consumer: FencedConsumer,
    stream: Stream,
    options: GroupMemberOptions,
    onFailure: (err: unknown) => void,
  ) {
    this.#consumer = consumer;
    this.#stream = stream;
    this.#options = options;
    this.#onFailure = onFailure;
  }

  push(message: BytesMessage): void {
    if (!this.#running || !this.#holds(message.topic, message.partition)) return;
    const key = `${message.topic}:${message.partition}`;
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { topic: message.topic, partition: message.partition, queue: [], running: false, tenure: 0 };
      this.#lanes.set(key, lane);
    }
    lane.queue.push(message);
    this.#queued += 1;
    if (this.#queued >= HIGH_WATER) this.#stream.pause();
    this.#next();
  }

  /**
   * A new generation (called on the client's join event, before the stream refreshes its offsets):
   * partitions taken away lose what waits and what was resolved; every partition is read again
   * from the committed offset, and whatever a fetch sent before brings back is dropped. The cost
   * is a refetch of what waits: duplicates, skipped.
   */
  rebalanced(): void {
    this.#consumer.assignmentChanged();
    const held = this.#heldNow();
    for (const [key, lane] of this.#lanes) {
      if (held.has(key)) continue;
      this.#queued -= lane.queue.length;
      lane.queue.length = 0;
      lane.tenure += 1;
    }
    for (const key of this.#resolved.keys()) if (!held.has(key)) this.#resolved.delete(key);
    this.#stream.offsetsToFetch.clear();
    if (this.#queued < HIGH_WATER / 2) this.#stream.resume();
  }

  /**
   * The consumer protocol's counterpart of rebalanced (called after each heartbeat, which is when
   * the client takes and gives partitions, a few at a time, with no generation to join): when the
   * partitions held changed, those taken away lose what waits, what was resolved and the stream's
   * position, so that given back they are read from the committed offset, and whatever a fetch
   * sent before brings back is dropped. The positions of the partitions still held stay: the
   * other members go on meanwhile, and the stream may already be reading a partition just given
   * from the offsets it refreshed.
   */
  reassigned(): void {
    const held = this.#heldNow();
    const key = [...held].sort().join(',');
    if (key === this.#heldKey) return;
    this.#heldKey = key;
    this.#consumer.assignmentChanged();
    for (const [partition, lane] of this.#lanes) {
      if (held.has(partition)) continue;
      this.#queued -= lane.queue.length;
      lane.queue.length = 0;
      lane.tenure += 1;
      this.#stream.offsetsToFetch.delete(partition);
    }
    for (const partition of this.#resolved.keys()) if (!held.has(partition)) this.#resolved.delete(partition);
    if (this.#queued < HIGH_WATER / 2) this.#stream.resume();
  }

  /** No more batches; resolves once the ones in progress have returned. */
  async stop(): Promise<void> {
    this.#running = false;
    while (this.#active > 0) await new Promise<void>((resolve) => this.#idle.add(resolve));
  }

  uncommittedOffsets(): TopicPartitionOffsets {
    const byTopic = new Map<string, { partition: number; offset: string }[]>();
    for (const { topic, partition, offset, committed } of this.#resolved.values()) {
      if (committed) continue;
      const partitions = byTopic.get(topic) ?? [];
      partitions.push({ partition, offset: String(offset) });
      byTopic.set(topic, partitions);
    }
    return { topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })) };
  }

  async commit(offsets: TopicPartitionOffsets): Promise<void> {
    const entries = offsets.topics.flatMap(({ topic, partitions }) =>
      partitions.map(({ partition, offset }) => {
        const leaderEpoch = this.#resolved.get(`${topic}:${partition}`)?.leaderEpoch ?? -1;
        return { topic, partition, offset: BigInt(offset), leaderEpoch };
      }),
    );
    if (entries.length === 0) return;
    await this.#consumer.commit({ offsets: entries });
    for (const { topic, partition, offset } of entries) {
      const resolved = this.#resolved.get(`${topic}:${partition}`);
      if (resolved?.offset === offset) resolved.committed = true;
    }
  }

  /** Starts lanes with messages waiting while fewer than the allowed number run. */
  #next(): void {
    for (const lane of this.#lanes.values()) {
      if (this.#active >= this.#options.partitionsConsumedConcurrently) return;
      if (lane.running || lane.queue.length === 0 || !this.#running) continue;
      void this.#run(lane);
    }
  }

  async #run(lane: Lane): Promise<void> {
    lane.running = true;
    this.#active += 1;
    const messages = lane.queue.splice(0, MAX_BATCH);
    this.#queued -= messages.length;
    if (this.#queued < HIGH_WATER / 2) this.#stream.resume();
    try {
      await this.#options.eachBatch(this.#batchOf(lane, messages));
    } catch (err) {
      // The loop gives a batch back when it cannot go on (a dead letter not written, a failover):
      // no lane goes on (the partition's next messages would be applied past the failed one), the
      // member is replaced, and its successor reads from the committed offsets.
      this.#running = false;
      this.#onFailure(err);
    } finally {
      lane.running = false;
      this.#active -= 1;
      if (this.#active === 0) {
        for (const resolve of this.#idle) resolve();
        this.#idle.clear();
      }
      this.#next();
    }
  }

  #batchOf(lane: Lane, messages: BytesMessage[]): PartitionBatch {
    const { topic, partition } = lane;
    const tenure = lane.tenure;
    const epochOf = new Map(messages.map((m) => [String(m.offset), m.leaderEpoch]));
    const isStale = () => tenure !== lane.tenure || !this.#holds(topic, partition);
    return {
      batch: { topic, partition, messages: messages.map(asConsumedMessage) },
      resolveOffset: (offset) => {
        if (isStale()) return;
        const next = {
          offset: BigInt(offset) + 1n,
          leaderEpoch: epochOf.get(offset) ?? -1,
          committed: false,
        };
        this.#resolved.set(`${topic}:${partition}`, { topic, partition, ...next });
      },
      // The client heartbeats on its own timer, whatever the loop is doing.
      heartbeat: async () => {},
      isRunning: () => this.#running,
      isStale,
      uncommittedOffsets: () => this.uncommittedOffsets(),
      commitOffsetsIfNecessary: (offsets) => this.commit(offsets),
    };
  }

  #heldNow(): Set<string> {
    const assignments = this.#consumer.assignments ?? [];
    return new Set(assignments.flatMap(({ topic, partitions }) => partitions.map((p) => `${topic}:${p}`)));
  }

  #holds(topic: string, partition: number): boolean {
    const assignment = this.#consumer.assignments?.find((a) => a.topic === topic);
    return assignment?.partitions.includes(partition) ?? false;
  }
}

/** A @platformatic/kafka message as the project's ConsumedMessage, bytes untouched. */
function asConsumedMessage(message: BytesMessage): ConsumedMessage {
  const headers: Record<string, Buffer | undefined> = {};
  for (const [name, value] of message.headers) if (name) headers[name.toString()] = value;
  return {
    key: message.key ?? null,
    value: message.value ?? null,
    headers,
    offset: String(message.offset),
    timestamp: String(message.timestamp),
  };
}
