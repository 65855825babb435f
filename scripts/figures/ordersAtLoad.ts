import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { WhereTimeGoes } from '../../bench/where-time-goes.ts';
import { day, num, percent } from './format.ts';
import { ofFiles, ofRuns } from './types.ts';

/** Three runs one after the other: profiled at 40 and 150 orders/s, and 150/s without the profiler. */
const RUNS = [
  { path: resultsFile('where-time-goes.cpu-prof-40.json'), label: 'profiled' },
  { path: resultsFile('where-time-goes.cpu-prof-150.json'), label: 'profiled' },
  { path: resultsFile('where-time-goes.rate-150.json'), label: 'not profiled' },
] as const;
const _SOURCES = RUNS.map((run) => run.path);
const ms = (value: number | undefined) => (value === undefined ? '—' : `${num(value, 2)} ms`);

/** The orders process per order at 40 and 150 orders/s: CPU, the wait for a core, and its profile. */
export const ordersAtLoad = ofRuns<WhereTimeGoes>(RUNS, (runs, link) => {
  const column = (pick: (results: WhereTimeGoes) => string) => runs.map(({ results }) => pick(results));
  const profile = (results: WhereTimeGoes) => results.profiles.orders;
  const perOrder = (results: WhereTimeGoes, value: number) => value / results.accepted;
  return [
    markdownTable(
      ['orders process, per order', ...runs.map(({ results, label }) => `${num(results.rate)}/s, ${label}`)],
      [
        ['CPU (`/proc`)', ...column((results) => ms(results.cpuMsPerOrder.orders))],
        [
          'main thread waiting for a core (`schedstat`)',
          ...column((results) => ms(results.waitMsPerOrder.orders)),
        ],
        [
          'busy samples in the profile',
          ...column((results) => {
            const found = profile(results);
            return found ? ms(perOrder(results, found.busyMs)) : '—';
          }),
        ],
        [
          'of which socket writes (`writev`, `writeBuffer`)',
          ...column((results) => {
            const found = profile(results);
            if (!found) return '—';
            return `${ms(perOrder(results, found.socketWritesMs))} (${percent(found.socketWritesMs / found.busyMs)})`;
          }),
        ],
        [
          'end-to-end p50 / p99 of the saga',
          ...column((results) => `${num(results.latencyMs.p50)} / ${num(results.latencyMs.p99)} ms`),
        ],
      ],
    ),
    `${runs.map(({ path }) => link(path)).join(', ')}; ${day(runs[0]?.results.date ?? '')}.`,
  ].join('\n\n');
});

/** How the table names a profile's part; the garbage collector's own name reads oddly in a table. */
const PARTS: [string, string][] = [
  ['Prisma (node-postgres below it included)', "Prisma (its node-postgres included): the API's write"],
  ['node-postgres', 'node-postgres outside Prisma: its saga consumer'],
  ['HTTP (express, node:http)', 'HTTP (express, node:http)'],
  ['other (our code, zod, Node internals, microtasks)', 'our code, zod, Node internals, microtasks'],
  ['kafkajs', 'kafkajs'],
  ['(garbage collector)', 'garbage collector'],
];
const PROFILED = RUNS.filter((run) => run.label === 'profiled').map((run) => run.path);

/** The orders process's busy samples by the first library on the stack, at 40 and 150 orders/s. */
export const ordersProfileParts = ofFiles<WhereTimeGoes>(PROFILED, (runs, link) => {
  const share = (results: WhereTimeGoes, part: string) => {
    const orders = results.profiles.orders;
    const found = orders?.parts.find((entry) => entry.part === part);
    return orders && found ? percent(found.ms / orders.busyMs) : '—';
  };
  return [
    markdownTable(
      ['part (first library on the stack)', ...runs.map((results) => `${num(results.rate)}/s`)],
      PARTS.map(([part, label]) => [label, ...runs.map((results) => share(results, part))]),
    ),
    `${PROFILED.map((path) => link(path)).join(', ')}.`,
  ].join('\n\n');
});
