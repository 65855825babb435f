import { markdownTable } from '@outbox/devstack/table';
import type { RelayVsDebezium } from '../../bench/relay-vs-debezium.ts';
import { resultsFile } from '../../bench/support/results.ts';
import { num, runsCaption, times } from './format.ts';
import { ofFiles } from './types.ts';

type Summary = RelayVsDebezium['summary'][number];

/** Two runs one after the other on a quiet machine: the backlog drain, relay beside Debezium. */
// The results files record no revision; both runs were of this one, its tree clean. The bench's
// relays are started without OTEL_* settings, so they export no spans.
export const RELAY_VS_DEBEZIUM_REVISION = '95cfa0d';
export const RELAY_VS_DEBEZIUM_RUNS = [
  resultsFile('relay-vs-debezium.quiet.json'),
  resultsFile('relay-vs-debezium.quiet-2.json'),
] as const;

export function drainCell(run: RelayVsDebezium, aggregates: number, side: string): Summary {
  const found = run.summary.find((row) => row.aggregates === aggregates && row.side === side);
  if (!found) throw new Error(`no ${side} cell with ${aggregates} aggregates in the run of ${run.date}`);
  return found;
}

export const relayVsDebezium = ofFiles<RelayVsDebezium>(RELAY_VS_DEBEZIUM_RUNS, (runs, link) => {
  const [first] = runs;
  if (!first) throw new Error('no relay-vs-debezium run');
  const counts = first.parameters.aggregateCounts;
  const sides = first.summary.filter((row) => row.aggregates === counts[0]);
  const cell = (aggregates: number, side: string) =>
    runs
      .map((run) => {
        const found = drainCell(run, aggregates, side);
        return side === 'debezium'
          ? num(found.medianEventsPerSec)
          : `${num(found.medianEventsPerSec)}, **${times(found.vsDebezium)}**`;
      })
      .join(' / ');
  return [
    markdownTable(
      [
        `backlog of ${num(first.parameters.events)} events`,
        ...counts.map((count) => `${num(count)} aggregates: events/s, ÷ Debezium (run 1 / run 2)`),
      ],
      sides.map(({ side, label }) => [label, ...counts.map((count) => cell(count, side))]),
    ),
    `Medians of ${first.parameters.rounds} rounds, each ratio paired within its round; revision \`${RELAY_VS_DEBEZIUM_REVISION}\`, tracing off. ` +
      runsCaption(RELAY_VS_DEBEZIUM_RUNS, runs, link),
  ].join('\n\n');
});
