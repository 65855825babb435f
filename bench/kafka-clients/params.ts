/** bench:kafka-clients' flags, checked before any set-up, and the settings of the processes it starts. */
import { parseArgs } from 'node:util';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import { positiveInt } from '../support/args.ts';
import { logger } from '../support/environment.ts';
import { resultsPath } from '../support/results.ts';

export const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'relay-events': { type: 'string', default: '20000' },
    'consumer-events': { type: 'string', default: '10000' },
    'warmup-events': { type: 'string', default: '2000' },
    label: { type: 'string', default: new Date().toISOString().slice(0, 10) },
  },
});
if (!/^[\w.-]+$/.test(args.label)) throw new Error(`--label ${args.label}: letters, digits, . _ - only`);

/** Both clients, kafkajs first: a round's order is this one or its reverse (rotated per round). */
export const CLIENTS: KafkaClientName[] = ['kafkajs', 'platformatic'];

export const params = {
  rounds: positiveInt('rounds', args.rounds),
  relayEvents: positiveInt('relay-events', args['relay-events']),
  consumerEvents: positiveInt('consumer-events', args['consumer-events']),
  warmupEvents: positiveInt('warmup-events', args['warmup-events']),
  // The relay as shipped (apps/relay/src/config.ts): batches of 1,000, a poll every second, six
  // partitions; an outbox already holding published rows, as in bench:relay.
  batchSize: 1000,
  pollIntervalMs: 1000,
  topicPartitions: 6,
  history: 10_000,
  aggregates: 2000,
};

export const out = resultsPath('kafka-clients', args.label);
export const log = logger('kafka-clients');
