import { markdownTable } from '@outbox/devstack/table';
import type { CdcLatency } from '../../bench/cdc-latency.ts';
import type { RelayVsDebezium } from '../../bench/relay-vs-debezium.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { MeasuredReport, SystemResults } from '../../bench/system/records.ts';
import { day, load, num, runsCaption } from './format.ts';
import { drainCell, RELAY_VS_DEBEZIUM_REVISION, RELAY_VS_DEBEZIUM_RUNS } from './relayVsDebezium.ts';
import { variant } from './system.ts';
import { type FigureTable, ofFiles } from './types.ts';

type Cell = CdcLatency['latency'][number];
type Drain = CdcLatency['drain'][number];
/** The first side-by-side run came before --aggregates: its parameters lack it (50 aggregates then). */
type SideBySide = Omit<CdcLatency, 'parameters'> & {
  parameters: Omit<CdcLatency['parameters'], 'aggregates'> &
    Partial<Pick<CdcLatency['parameters'], 'aggregates'>>;
};

const RUNS = [
  resultsFile('cdc-side-by-side.run-1.json'),
  resultsFile('cdc-side-by-side.run-2.json'),
] as const;
const SIDE = { polling: 'polling relay (NOTIFY)', debezium: 'Debezium connector' } as const;

export const cdcSideBySide = ofFiles<SideBySide>(RUNS, (runs, link) => {
  const [first] = runs;
  if (!first) throw new Error('no cdc-side-by-side run');
  const each = (pick: (run: SideBySide) => string) => runs.map(pick).join(', ');
  const cell = (run: SideBySide, rate: number, side: Cell['side']) => {
    const found = run.latency.find((candidate) => candidate.rate === rate && candidate.side === side);
    if (!found) throw new Error(`no ${side} cell at ${rate}/s in the run of ${run.date}`);
    return found;
  };
  const latencyRows = first.latency.map(({ rate, side }) => [
    `${num(rate)}/s`,
    each((run) => num(cell(run, rate, side).achievedRate)),
    SIDE[side],
    each((run) => num(cell(run, rate, side).toBroker.p50)),
    each((run) => num(cell(run, rate, side).toBroker.p99)),
    each((run) => num(cell(run, rate, side).toConsumer.p50)),
  ]);
  const drain = (run: SideBySide, side: Drain['side']) => {
    const found = run.drain.find((candidate) => candidate.side === side);
    return found
      ? `${num(found.startToLastMs / 1000, 2)} s, **${num(found.eventsPerSecond)} events/s**`
      : '—';
  };
  const aggregates = (run: SideBySide) => `${num(run.parameters.aggregates ?? 50)} aggregates`;
  return [
    'Commit → broker ack and → a consumer, ms (run 1, run 2):',
    markdownTable(
      ['offered', 'achieved/s', 'relay', 'commit→ack p50', 'commit→ack p99', '→ consumer p50'],
      latencyRows,
    ),
    markdownTable(
      [
        `backlog of ${num(first.parameters.backlog)} events`,
        ...runs.map((run, i) => `run ${i + 1} (${aggregates(run)})`),
      ],
      (['debezium', 'polling'] as const).map((side) => [SIDE[side], ...runs.map((run) => drain(run, side))]),
    ),
    runsCaption(RUNS, runs, link),
  ].join('\n\n');
});

type SystemReport = MeasuredReport;

const SYSTEM = resultsFile('system.polling-vs-cdc.json');
const DRAIN = RELAY_VS_DEBEZIUM_RUNS[0];

/** The few figures the choice between polling and CDC turns on, side by side. */
export const pollingOrCdc: FigureTable = {
  sources: [RUNS[1], SYSTEM, DRAIN],
  render({ read, link }) {
    const sideBySide = read<SideBySide>(RUNS[1]);
    const system = read<SystemResults<SystemReport>>(SYSTEM);
    const drains = read<RelayVsDebezium>(DRAIN);
    const [polling, cdc] = [variant(system, 'current', SYSTEM), variant(system, 'cdc', SYSTEM)];
    const p50s = (side: Cell['side']) =>
      sideBySide.latency
        .filter((found) => found.side === side)
        .map((found) => num(found.toBroker.p50))
        .join(' / ');
    const rates = sideBySide.latency
      .filter((found) => found.side === 'polling')
      .map((found) => num(found.achievedRate))
      .join(' / ');
    const drained = (aggregates: number, side: string) =>
      num(drainCell(drains, aggregates, side).medianEventsPerSec);
    const fixed = system.args['fixed-rate'] ?? '?';
    const cpu = (found: SystemReport, part: string) => num(found.atFixedRate.cpuMsPerOrder[part], 1);
    return [
      markdownTable(
        ['measured', 'polling', 'CDC', 'from'],
        [
          [
            `commit → broker ack p50 at ${rates} events/s, ms`,
            p50s('polling'),
            p50s('debezium'),
            link(RUNS[1]),
          ],
          ...drains.parameters.aggregateCounts.map((aggregates) => [
            `draining a backlog of ${num(drains.parameters.events)} events over ${num(aggregates)} aggregates, events/s (one relay, default batch)`,
            drained(aggregates, 'polling1b1000'),
            drained(aggregates, 'debezium'),
            link(DRAIN),
          ]),
          [
            'the whole saga sustained, orders/s (two outbox hops per order)',
            num(polling.capacity),
            num(cdc.capacity),
            link(SYSTEM),
          ],
          [
            `the saga at ${fixed} orders/s: p50 / p99 ms`,
            `${num(polling.atFixedRate.latencyMs.p50)} / ${num(polling.atFixedRate.latencyMs.p99)}`,
            `${num(cdc.atFixedRate.latencyMs.p50)} / ${num(cdc.atFixedRate.latencyMs.p99)}`,
            link(SYSTEM),
          ],
          [
            `CPU ms per order at ${fixed} orders/s, all processes (of it PostgreSQL)`,
            `${cpu(polling, 'total')} (${cpu(polling, 'postgres')})`,
            `${cpu(cdc, 'total')} (${cpu(cdc, 'postgres')})`,
            link(SYSTEM),
          ],
        ],
      ),
      `Each row's file says when and at what load it ran: the side-by-side run ${day(sideBySide.date)} (${load(sideBySide.loadavg.before, sideBySide.loadavg.after)}), ` +
        `the backlog drain ${day(drains.date)} at \`${RELAY_VS_DEBEZIUM_REVISION}\` (${load(drains.loadavg.before, drains.loadavg.after)}, tracing off), the whole saga ${day(system.date)}.`,
    ].join('\n\n');
  },
};
