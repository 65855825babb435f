/** bench:relay's flags, checked before any set-up, and the latency modes they name. */
import { positiveInts } from '../support/args.ts';
import { as, defineBench, int, ints, list, skip, text } from '../support/bench.ts';

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
    batchSize: as('batch', int(100, "the relay's batch size")),
    relayCounts: as('relays', ints('1,2,4', 'relay counts measured')),
    /** Relay counts also measured with the planner statistics of a drained outbox ("stale"). */
    staleRelayCounts: as(
      'stale-relays',
      text(
        '1,4',
        "relay counts also measured with a drained outbox's statistics ('' for none)",
        (name, value) => (value === '' ? [] : positiveInts(name, value)),
      ),
    ),
    /** Backlog for the stale variants: their claim cost grows with the backlog, so it is smaller. */
    staleEvents: int(2000, 'the backlog of the stale variants'),
    claimProbeEvents: int(3000, 'the backlog the claim statement is probed on'),
    claimProbe: skip('skip-claim-probe', 'leave the claim probe out'),
    /** Published rows already in the outbox when the backlog arrives (analyzed with it). */
    history: text('10000', 'published rows already in the outbox when the backlog arrives', (_name, value) =>
      Number(value),
    ),
    warmupEvents: int(2000, 'events each variant publishes before the first round'),
    producerCounts: as('producers', ints('1,4', 'bare producer counts (1, the ceiling, among them)')),
    rates: ints('200,1000', 'offered rates of the latency measurement, events/s'),
    txPerSec: int(200, 'transactions per second of the latency load'),
    latencySeconds: int(4, 'seconds per latency measurement'),
    latencyRounds: int(2, 'latency rounds per run'),
    modes: list('notify,poll1000,poll100', 'latency modes', Object.keys(modeInfo) as LatencyMode[]),
    throughput: skip('skip-throughput', 'leave the throughput measurements out'),
    latency: skip('skip-latency', 'leave the latency measurements out'),
  },
});

export const params = {
  ...bench.parameters,
  topicPartitions: 6, // the relay's default KAFKA_TOPIC_PARTITIONS
  throughputPollIntervalMs: 1000, // the relay's default RELAY_POLL_INTERVAL_MS
};
if (!params.producerCounts.includes(1)) throw new Error('--producers must include 1 (the ceiling)');
export const log = bench.log;
