import type { Consumer, Message } from '@platformatic/kafka';
import type { KafkaMessage } from '../clientTypes.ts';
import type { GroupMemberOptions, PartitionBatch, TopicPartitionOffsets } from '../ports.ts';

type Bytes = Buffer | undefined;
type BytesConsumer = Consumer<Bytes, Bytes, Bytes, Bytes>;
type BytesMessage = Message<Bytes, Bytes, Bytes, Bytes>;

/** At most this many messages of one partition handed to the loop at once (its chunks cut them further). */
const MAX_BATCH = 500;
/** Messages held unprocessed across all partitions before the stream is paused, and resumed at half. */
const HIGH_WATER = 5_000;

type Lane = { topic: string; partition: number; queue: BytesMessage[]; running: boolean };
type Resolved = { offset: bigint; leaderEpoch: number; committed: boolean };

/**
 * @platformatic/kafka gives one stream of messages from every partition this member holds; the
 * loop wants kafkajs's shape, a batch of one partition at a time, several partitions at once, each
 * in offset order. A lane per partition queues its messages and hands them over one batch at a
 * time; `partitionsConsumedConcurrently` lanes run at once. The stream is paused while too many
 * messages wait, so a slow database does not fill the memory.
 *
 * A rebalance (a new generation) empties every lane: the stream fetches again from the committed
 * offsets (its committed mode), and a batch cut in the old generation is stale, so the loop stops
 * applying it. What it applied before is redelivered and skipped as a duplicate.
 */
export class Lanes {
  readonly #lanes = new Map<string, Lane>();
  readonly #resolved = new Map<string, Resolved & { topic: string; partition: number }>();
  readonly #consumer: BytesConsumer;
  readonly #options: GroupMemberOptions;
  readonly #flow: { pause(): void; resume(): void };
  readonly #onFailure: (err: unknown) => void;
  readonly #idle = new Set<() => void>();
  #queued = 0;
  #active = 0;
  #running = true;

  constructor(
    consumer: BytesConsumer,
    flow: { pause(): void; resume(): void },
    options: GroupMemberOptions,
    onFailure: (err: unknown) => void,
  ) {
    this.#consumer = consumer;
    this.#flow = flow;
    this.#options = options;
    this.#onFailure = onFailure;
  }

  push(message: BytesMessage): void {
    if (!this.#running || generationOf(message) !== this.#consumer.generationId) return;
    const key = `${message.topic}:${message.partition}`;
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { topic: message.topic, partition: message.partition, queue: [], running: false };
      this.#lanes.set(key, lane);
    }
    lane.queue.push(message);
    this.#queued += 1;
    if (this.#queued >= HIGH_WATER) this.#flow.pause();
    this.#next();
  }

  /** A new generation: what waits is dropped, and what was resolved on partitions no longer held. */
  rebalanced(): void {
    for (const lane of this.#lanes.values()) lane.queue.length = 0;
    this.#queued = 0;
    for (const [key, { topic, partition }] of this.#resolved)
      if (!this.#holds(topic, partition)) this.#resolved.delete(key);
    this.#flow.resume();
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
    if (this.#queued < HIGH_WATER / 2) this.#flow.resume();
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
    const generation = this.#consumer.generationId;
    const epochOf = new Map(messages.map((m) => [String(m.offset), m.leaderEpoch]));
    const isStale = () => generation !== this.#consumer.generationId || !this.#holds(topic, partition);
    return {
      batch: { topic, partition, messages: messages.map(asKafkaMessage) },
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

  #holds(topic: string, partition: number): boolean {
    const assignment = this.#consumer.assignments?.find((a) => a.topic === topic);
    return assignment?.partitions.includes(partition) ?? false;
  }
}

/** The group generation the message was fetched in (the client's metadata of a consumed message). */
function generationOf(message: BytesMessage): number | undefined {
  return (message.metadata.consumer as { generationId?: number } | undefined)?.generationId;
}

/** A @platformatic/kafka message in the shape the loop reads (kafkajs's), bytes untouched. */
function asKafkaMessage(message: BytesMessage): KafkaMessage {
  const headers: Record<string, Buffer | undefined> = {};
  for (const [name, value] of message.headers) if (name) headers[name.toString()] = value;
  return {
    key: message.key ?? null,
    value: message.value ?? null,
    headers,
    offset: String(message.offset),
    timestamp: String(message.timestamp),
    attributes: 0,
  };
}
