import type { EventEnvelope } from '@outbox/contracts';
import { exemplarOf } from '@outbox/runtime/exemplars';
import type { TopicAdmin } from '@outbox/runtime/kafka';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { ChunkResult } from './chunk.ts';

/** One event of a committed chunk, as the metrics see it. */
export type HandledEvent = { event: EventEnvelope; result: ChunkResult; seconds: number };

type Failing = () => readonly { topic: string; partition: number; since: number }[];

/**
 * A consumer's metrics. Labels stay low-cardinality: consumer group, event type, result, topic,
 * partition — never an event or order id.
 */
export function createConsumerMetrics(
  registry: MetricsRegistry,
  consumer: string,
  failing: Failing = () => [],
) {
  return { ...eventMetrics(registry, consumer), ...partitionMetrics(registry, consumer, failing) };
}

/** What became of the events of committed chunks, and how long their handlers took. */
function eventMetrics(registry: MetricsRegistry, consumer: string) {
  const registers = [registry];
  const handled = new Counter({
    name: 'consumer_events_total',
    help: 'Events handled, by result: applied, duplicate (already applied, skipped), ignored (not for us).',
    labelNames: ['consumer', 'event_type', 'result'],
    registers,
  });
  const handlerDuration = new Histogram({
    name: 'consumer_handler_duration_seconds',
    help: "Time to apply one event's effect inside its chunk's transaction (its handler, outgoing events included).",
    labelNames: ['consumer', 'event_type'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
    enableExemplars: true, // the trace id of the event (./exemplars.ts)
  });
  const commitToConsume = new Histogram({
    name: 'consumer_commit_to_consume_seconds',
    help: "From the event's business transaction (its time) to this consumer having applied it.",
    labelNames: ['consumer'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers,
    enableExemplars: true,
  });
  const chunkSize = new Histogram({
    name: 'consumer_chunk_events',
    help: 'Events per committed chunk (one transaction).',
    labelNames: ['consumer'],
    buckets: [1, 2, 5, 10, 25, 50, 100, 200, 500],
    registers,
  }).labels({ consumer });
  const onHandled = ({ event, result, seconds }: HandledEvent) => {
    handled.inc({ consumer, event_type: event.type, result });
    if (result !== 'applied') return;
    const exemplarLabels = exemplarOf(event.traceparent);
    handlerDuration.observe({ labels: { consumer, event_type: event.type }, value: seconds, exemplarLabels });
    // A foreign producer's `time` may be no date: the event is applied all the same, unmeasured.
    const committedAt = Date.parse(event.time);
    if (Number.isNaN(committedAt)) return;
    const sinceCommit = Math.max(0, (Date.now() - committedAt) / 1000);
    commitToConsume.observe({ labels: { consumer }, value: sinceCommit, exemplarLabels });
  };
  return {
    /** A chunk committed: its size, and each event's result and handler time. */
    onCommitted(events: readonly HandledEvent[]) {
      chunkSize.observe(events.length);
      for (const handledEvent of events) onHandled(handledEvent);
    },
  };
}

/** Per partition: dead letters, retries, how long one has been stuck, and the lag. */
function partitionMetrics(registry: MetricsRegistry, consumer: string, failing: Failing) {
  const registers = [registry];
  const deadLettered = new Counter({
    name: 'consumer_dead_lettered_total',
    help: 'Messages this consumer sent to a dead-letter topic: unreadable, or failing deterministically in the handler.',
    labelNames: ['consumer', 'topic'],
    registers,
  });
  const lag = new Gauge({
    name: 'consumer_lag_messages',
    help: 'Messages on a partition that this consumer group has not committed yet.',
    labelNames: ['consumer', 'topic', 'partition'],
    registers,
  });
  const retries = new Counter({
    name: 'consumer_chunk_retries_total',
    help: 'Chunks rolled back on a transient failure and retried, by partition.',
    labelNames: ['consumer', 'topic', 'partition'],
    registers,
  });
  // Computed at scrape time from the retrying partitions, so it keeps growing while a partition
  // retries even when no new message arrives: the alert fires on a quiet topic too.
  new Gauge({
    name: 'consumer_partition_stuck_seconds',
    help: 'How long a partition has been retrying the same failing chunk (0 when none is failing).',
    labelNames: ['consumer', 'topic', 'partition'],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const p of failing()) {
        this.set({ consumer, topic: p.topic, partition: String(p.partition) }, (now - p.since) / 1000);
      }
    },
  });
  return {
    onDeadLettered(topic: string) {
      deadLettered.inc({ consumer, topic });
    },
    onRetry(topic: string, partition: number) {
      retries.inc({ consumer, topic, partition: String(partition) });
    },
    /** Committed offsets vs. end offsets, per partition; called on each scrape interval. */
    async updateLag(admin: TopicAdmin, topics: string[]) {
      const committed = await admin.committedOffsets(consumer, topics);
      for (const { topic, partitions } of committed) {
        const ends = await admin.topicOffsets(topic);
        for (const end of ends) {
          const done = Number(partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
          const behind = Number(end.high) - Math.max(done, Number(end.low));
          lag.set({ consumer, topic, partition: String(end.partition) }, Math.max(0, behind));
        }
      }
    },
  };
}

export type ConsumerMetrics = ReturnType<typeof createConsumerMetrics>;
