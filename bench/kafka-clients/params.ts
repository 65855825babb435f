/** bench:kafka-clients' flags, checked before any set-up, and the settings of the processes it starts. */
import type { KafkaClientName } from '@outbox/runtime/kafka';
import { defineBench, int, optional, text } from '../support/bench.ts';
import { resultsPath } from '../support/results.ts';

export const bench = defineBench({
  name: 'kafka-clients',
  about:
    'The two Kafka clients side by side: how fast one relay drains a backlog and one inventory process ' +
    'applies one, with KAFKA_CLIENT=kafkajs and =platformatic, and the CPU each spends per event.',
  options: {
    rounds: int(3, 'rounds; each measures both clients, the order reversed every other round'),
    relayEvents: int(20000, 'the backlog the relay drains'),
    consumerEvents: int(10000, 'the backlog the consumer applies'),
    warmupEvents: int(2000, 'events per client before the first round'),
    label: text(new Date().toISOString().slice(0, 10), "the run's label, in its file name", (name, value) => {
      if (!/^[\w.-]+$/.test(value)) throw new Error(`--${name} ${value}: letters, digits, . _ - only`);
      return value;
    }),
    out: optional(
      'prefix of the <out>.json and <out>.md written (default bench/results/kafka-clients/kafka-clients.<label>)',
    ),
  },
});
const { args } = bench;

/** Both clients, kafkajs first: a round's order is this one or its reverse (rotated per round). */
export const CLIENTS: KafkaClientName[] = ['kafkajs', 'platformatic'];

export const params = {
  rounds: args.rounds,
  relayEvents: args.relayEvents,
  consumerEvents: args.consumerEvents,
  warmupEvents: args.warmupEvents,
  // The relay as shipped (apps/relay/src/config.ts): batches of 1,000, a poll every second, six
  // partitions; an outbox already holding published rows, as in bench:relay.
  batchSize: 1000,
  pollIntervalMs: 1000,
  topicPartitions: 6,
  history: 10_000,
  aggregates: 2000,
};

export const out = args.out ?? resultsPath('kafka-clients', args.label);
export const log = bench.log;
