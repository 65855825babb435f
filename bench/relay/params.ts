/** bench:relay's flags, checked before any set-up, and the latency modes they name. */
import { parseArgs } from 'node:util';
import { positiveInt, positiveInts } from '../support/args.ts';
import { logger } from '../support/environment.ts';
import { resultsPath } from '../support/results.ts';

export const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '20000' },
    aggregates: { type: 'string', default: '2000' },
    batch: { type: 'string', default: '100' },
    relays: { type: 'string', default: '1,2,4' },
    'stale-relays': { type: 'string', default: '1,4' },
    'stale-events': { type: 'string', default: '2000' },
    'claim-probe-events': { type: 'string', default: '3000' },
    'skip-claim-probe': { type: 'boolean', default: false },
    history: { type: 'string', default: '10000' },
    'warmup-events': { type: 'string', default: '2000' },
    producers: { type: 'string', default: '1,4' },
    rates: { type: 'string', default: '200,1000' },
    'tx-per-sec': { type: 'string', default: '200' },
    'latency-seconds': { type: 'string', default: '4' },
    'latency-rounds': { type: 'string', default: '2' },
    modes: { type: 'string', default: 'notify,poll1000,poll100' },
    'skip-throughput': { type: 'boolean', default: false },
    'skip-latency': { type: 'boolean', default: false },
    out: { type: 'string', default: resultsPath('relay-throughput') },
  },
});

export const params = {
  runs: positiveInt('runs', args.runs),
  rounds: positiveInt('rounds', args.rounds),
  events: positiveInt('events', args.events),
  aggregates: positiveInt('aggregates', args.aggregates),
  batchSize: positiveInt('batch', args.batch),
  relayCounts: positiveInts('relays', args.relays),
  /** Relay counts also measured with the planner statistics of a drained outbox ("stale"). */
  staleRelayCounts: args['stale-relays'] === '' ? [] : positiveInts('stale-relays', args['stale-relays']),
  /** Backlog for the stale variants: their claim cost grows with the backlog, so it is smaller. */
  staleEvents: positiveInt('stale-events', args['stale-events']),
  claimProbeEvents: positiveInt('claim-probe-events', args['claim-probe-events']),
  claimProbe: !args['skip-claim-probe'],
  /** Published rows already in the outbox when the backlog arrives (analyzed with it). */
  history: Number(args.history),
  warmupEvents: positiveInt('warmup-events', args['warmup-events']),
  producerCounts: positiveInts('producers', args.producers),
  rates: positiveInts('rates', args.rates),
  txPerSec: positiveInt('tx-per-sec', args['tx-per-sec']),
  latencySeconds: positiveInt('latency-seconds', args['latency-seconds']),
  latencyRounds: positiveInt('latency-rounds', args['latency-rounds']),
  modes: args.modes.split(',') as LatencyMode[],
  throughput: !args['skip-throughput'],
  latency: !args['skip-latency'],
  topicPartitions: 6, // the relay's default KAFKA_TOPIC_PARTITIONS
  throughputPollIntervalMs: 1000, // the relay's default RELAY_POLL_INTERVAL_MS
};
if (!params.producerCounts.includes(1)) throw new Error('--producers must include 1 (the ceiling)');

export type LatencyMode = 'notify' | 'poll1000' | 'poll100';
export const modeInfo: Record<LatencyMode, { label: string; notify: boolean; pollMs: number }> = {
  notify: { label: 'NOTIFY on, poll 1000 ms (production default)', notify: true, pollMs: 1000 },
  poll1000: { label: 'NOTIFY trigger disabled, poll 1000 ms', notify: false, pollMs: 1000 },
  poll100: { label: 'NOTIFY trigger disabled, poll 100 ms', notify: false, pollMs: 100 },
};
for (const mode of params.modes) if (!(mode in modeInfo)) throw new Error(`unknown mode ${mode}`);

export const log = logger('relay-throughput');
