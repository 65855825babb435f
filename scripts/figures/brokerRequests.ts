import { markdownTable } from '@outbox/devstack/table';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { WhereTimeGoes } from '../../bench/where-time-goes.ts';
import { day, load, num } from './format.ts';
import { ofRuns } from './types.ts';

/** A `bench:where-time-goes` run made with --broker-requests: its broker's requests are counted. */
type Run = Written<WhereTimeGoes> & Required<Pick<WhereTimeGoes, 'brokerRequests'>>;

/** 30 orders/s, tracing off, the relays without and with a 25 ms linger, one after the other. */
const RUNS = [
  {
    path: resultsFile('where-time-goes.broker-requests.linger-0.json'),
    label: 'relay linger 0 (the default)',
  },
  { path: resultsFile('where-time-goes.broker-requests.linger-25.json'), label: '`RELAY_LINGER_MS=25`' },
] as const;
const APIS = ['PRODUCE', 'FETCH', 'OFFSET_COMMIT'] as const;

/** The broker's requests per order by API, its CPU per order, and so its CPU per request. */
export const brokerRequestsAtLowRate = ofRuns<Run>(RUNS, (runs, link) => {
  const all = (results: Run) => Object.values(results.brokerRequests.perOrder).reduce((a, b) => a + b, 0);
  const others = (results: Run) =>
    Object.entries(results.brokerRequests.perOrder)
      .filter(([api]) => !(APIS as readonly string[]).includes(api))
      .reduce((sum, [, n]) => sum + n, 0);
  const kafkaMs = (results: Run) => results.cpuMsPerOrder.kafka ?? Number.NaN;
  const row = (label: string, pick: (results: Run) => string) => [
    label,
    ...runs.map(({ results }) => pick(results)),
  ];
  const table = markdownTable(
    ['per accepted order', ...runs.map((run) => run.label)],
    [
      ...APIS.map((api) => row(`${api} requests`, (r) => num(r.brokerRequests.perOrder[api] ?? 0, 2))),
      row('other requests (heartbeats, metadata, offsets)', (r) => num(others(r), 2)),
      row('**all requests**', (r) => `**${num(all(r), 2)}**`),
      row('Kafka JVM CPU, ms', (r) => num(kafkaMs(r), 2)),
      row('Kafka JVM CPU per request, ms', (r) => num(kafkaMs(r) / all(r), 2)),
      row('all processes CPU, ms', (r) => num(r.cpuMsPerOrder.total, 2)),
      row('end-to-end p50 / p99, ms', (r) => `${r.latencyMs.p50} / ${r.latencyMs.p99}`),
    ],
  );
  const sources = runs
    .map(
      ({ path, results }) =>
        `${link(path)} (\`${results.run.revision}\`, tracing ${results.run.tracing}, ${load(results.run.loadBefore, results.run.loadAfter)})`,
    )
    .join(', ');
  const [first] = runs;
  const command = first
    ? `\`bench:where-time-goes --rate ${first.results.rate} --seconds ${first.results.seconds} --broker-requests\``
    : '';
  return `${table}\n\n${sources}: ${first ? day(first.results.date) : ''}, ${command}, one run each, on a machine shared with other work.`;
});
