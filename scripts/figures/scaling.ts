import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import type { Report as ConsumerResults } from '../../bench/consumer/report.ts';
import type { Report as RelayResults } from '../../bench/relay/report.ts';
import type { RetentionResults } from '../../bench/retention/report.ts';
import type { ScalingReport } from '../../bench/scaling/report.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { Step, SystemResults } from '../../bench/system/records.ts';
import { duration, num, percent } from './format.ts';
import { atCapacity, relaysCpu, variant } from './system.ts';
import { type FigureTable, ofFile, type Results } from './types.ts';

const SCALING = resultsFile('scaling.json');
const KAFKA = { broker: '1 broker, RF 1', cluster: '3 brokers, RF 3' } as const;

/** Capacity with n instances per consumer group and n relays per outbox, on one broker and on three. */
export const scalingMatrix = ofFile<ScalingReport>(SCALING, (results, link) => {
  const cells = [...results.cells].sort(
    (a, b) => a.kafka.localeCompare(b.kafka) || a.instances - b.instances,
  );
  const rows = cells.map((cell) => ({ ...cell, step: cell.runs[0] && atCapacity(cell.runs[0]) }));
  // A cell with no sustained step says so once, its other figures left empty.
  const at = (cell: (step: Step) => string) => (row: (typeof rows)[number]) =>
    row.step ? cell(row.step) : '';
  return [
    markdownTableOf(rows, {
      Kafka: ({ kafka }) => KAFKA[kafka],
      n: ({ instances }) => String(instances),
      'capacity (orders/s)': ({ step }) => (step ? num(step.offeredRate) : 'none sustained'),
      'p99 at capacity': at((step) => `${num(step.latencyMs.p99)} ms`),
      'CPU ms per order at capacity': at((step) => num(step.cpuMsPerOrder.total, 1)),
      'our processes, cores': at((step) => num((step.cpuSeconds.total ?? Number.NaN) / step.seconds, 2)),
      'machine busy': at((step) => percent(step.machineBusy)),
      'load average (1 min)': at((step) => num(step.loadavg[0], 1)),
    }),
    `${link(SCALING)}: ${duration(results.args.step)} steps, one run per cell.`,
  ].join('\n\n');
});

const SYSTEM = resultsFile('system.json');
const RELAY = resultsFile('relay-throughput.json');
const CONSUMER = resultsFile('consumer-throughput.json');
const RETENTION = resultsFile('retention.json');
/** The results files of the costs the sizing arithmetic starts from. */
export const COST_SOURCES = [SYSTEM, RELAY, CONSUMER, RETENTION] as const;

/** The measured costs, as their benchmarks wrote them: the table below and the arithmetic read these. */
export function measuredCosts(read: Results['read']) {
  const system = variant(read<SystemResults>(SYSTEM), 'current', SYSTEM);
  const relay = read<RelayResults>(RELAY).runs[0]?.summary;
  const retention = read<RetentionResults>(RETENTION);
  return {
    capacity: system.capacity,
    cpu: atCapacity(system)?.cpuMsPerOrder ?? {},
    relay,
    relayCpu: relay?.cpuPer1000.R1 ?? {},
    consumer: read<ConsumerResults>(CONSUMER).runs[0]?.summary,
    million: retention.claimAtScale.find((stage) => stage.published === 1_000_000),
    deleted: retention.retention.A,
    dropped: retention.retention.B,
    partitioned: retention.claimPhases.map((phase) => phase.summary.P?.vsRef ?? Number.NaN),
  };
}

/** The per-event costs the sizing arithmetic starts from, each from its benchmark's results. */
export const scalingCosts: FigureTable = {
  sources: COST_SOURCES,
  render({ read, link }) {
    const {
      cpu,
      relay,
      relayCpu: perOne,
      consumer,
      million,
      deleted,
      dropped,
      partitioned,
    } = measuredCosts(read);
    const ms = (value: number | undefined) => num(value, 2);
    const relays = relaysCpu(cpu);
    return markdownTable(
      ['measured cost', 'value', 'source'],
      [
        [
          'CPU per order, whole system at capacity',
          `${ms(cpu.total)} ms: PostgreSQL ${ms(cpu.postgres)}, orders API ${ms(cpu.orders)}, three relays ${ms(relays)}, Kafka ${ms(cpu.kafka)}, billing ${ms(cpu.billing)}, inventory ${ms(cpu.inventory)}`,
          link(SYSTEM),
        ],
        [
          'one relay on one outbox, draining a backlog',
          `${num(relay?.eventsPerSec.R1)} events/s; two relays ${num(relay?.eventsPerSec.R2)}`,
          link(RELAY),
        ],
        [
          'CPU per 1,000 events published (one relay)',
          `relay ${ms(perOne.relays)} s, broker ${ms(perOne.broker)} s, PostgreSQL ${ms(perOne.postgres)} s`,
          link(RELAY),
        ],
        [
          'one consumer instance from a backlog',
          `inventory ${num(consumer?.eventsPerSec.I)} events/s, billing ${num(consumer?.eventsPerSec.B)}`,
          link(CONSUMER),
        ],
        [
          'outbox table size',
          `${num(million?.sizes.totalMiB, 1)} MiB per million published rows`,
          link(RETENTION),
        ],
        [
          'retention by batched delete, one connection',
          `${num(deleted.rowsPerSec)} rows/s, ${num(deleted.walMiB, 1)} MiB of WAL for ${num(deleted.rowsDeleted)} rows (${num((deleted.walMiB * 1024 * 1024) / deleted.rowsDeleted)} bytes per row)`,
          link(RETENTION),
        ],
        [
          'retention by dropping day partitions',
          `${num(dropped.rowsPerSec)} rows/s, ${num(dropped.walMiB, 1)} MiB of WAL for ${num(dropped.rowsDeleted)} rows`,
          link(RETENTION),
        ],
        [
          'claim on a day-partitioned outbox',
          `${num(Math.min(...partitioned), 2)}–${num(Math.max(...partitioned), 2)}× the time on the plain table`,
          link(RETENTION),
        ],
      ],
    );
  },
};
