/** bench:relay's flags, checked before any set-up, and the latency modes they name. */
import { positiveInts } from '../support/args.ts';
import { defineBench, flag, int, ints, list, text } from '../support/bench.ts';

export type LatencyMode = 'notify' | 'poll1000' | 'poll100';
export const modeInfo: Record<LatencyMode, { label: string; notify: boolean; pollMs: number }> = {
  notify: { label: 'NOTIFY on, poll 1000 ms (production default)', notify: true, pollMs: 1000 },
  poll1000: { label: 'NOTIFY trigger disabled, poll 1000 ms', notify: false, pollMs: 1000 },
  poll100: { label: 'NOTIFY trigger disabled, poll 100 ms', notify: false, pollMs: 100 },
};

export const bench = defineBench({
  name: 'relay-throughput',
  about:
    'Events per second of 1, 2 and 4 relays against a bare producer (the ceiling), and the commit-to-ack ' +
    'latency at a steady offered load, with and without NOTIFY.',
  options: {
    runs: int(1, 'runs, each on fresh databases'),
    rounds: int(3, 'rounds per run; each runs every variant once, in a rotating order'),
    events: int(20000, 'the backlog each throughput variant drains'),
    aggregates: int(2000, 'distinct aggregate ids the events are spread over'),
    batch: int(100, "the relay's batch size"),
    relays: ints('1,2,4', 'relay counts measured'),
    'stale-relays': text(
      '1,4',
      "relay counts also measured with a drained outbox's statistics ('' for none)",
      (name, value) => (value === '' ? [] : positiveInts(name, value)),
    ),
    'stale-events': int(2000, 'the backlog of the stale variants (their claim cost grows with it)'),
    'claim-probe-events': int(3000, 'the backlog the claim statement is probed on'),
    'skip-claim-probe': flag('leave the claim probe out'),
    history: text('10000', 'published rows already in the outbox when the backlog arrives', (_name, value) =>
      Number(value),
    ),
    'warmup-events': int(2000, 'events each variant publishes before the first round'),
    producers: ints('1,4', 'bare producer counts (1, the ceiling, among them)'),
    rates: ints('200,1000', 'offered rates of the latency measurement, events/s'),
    'tx-per-sec': int(200, 'transactions per second of the latency load'),
    'latency-seconds': int(4, 'seconds per latency measurement'),
    'latency-rounds': int(2, 'latency rounds per run'),
    modes: list('notify,poll1000,poll100', 'latency modes', Object.keys(modeInfo)),
    'skip-throughput': flag('leave the throughput measurements out'),
    'skip-latency': flag('leave the latency measurements out'),
  },
});
const { args } = bench;

export const params = {
  runs: args.runs,
  rounds: args.rounds,
  events: args.events,
  aggregates: args.aggregates,
  batchSize: args.batch,
  relayCounts: args.relays,
  /** Relay counts also measured with the planner statistics of a drained outbox ("stale"). */
  staleRelayCounts: args['stale-relays'],
  /** Backlog for the stale variants: their claim cost grows with the backlog, so it is smaller. */
  staleEvents: args['stale-events'],
  claimProbeEvents: args['claim-probe-events'],
  claimProbe: !args['skip-claim-probe'],
  /** Published rows already in the outbox when the backlog arrives (analyzed with it). */
  history: args.history,
  warmupEvents: args['warmup-events'],
  producerCounts: args.producers,
  rates: args.rates,
  txPerSec: args['tx-per-sec'],
  latencySeconds: args['latency-seconds'],
  latencyRounds: args['latency-rounds'],
  modes: args.modes as LatencyMode[],
  throughput: !args['skip-throughput'],
  latency: !args['skip-latency'],
  topicPartitions: 6, // the relay's default KAFKA_TOPIC_PARTITIONS
  throughputPollIntervalMs: 1000, // the relay's default RELAY_POLL_INTERVAL_MS
};
if (!params.producerCounts.includes(1)) throw new Error('--producers must include 1 (the ceiling)');
export const log = bench.log;
