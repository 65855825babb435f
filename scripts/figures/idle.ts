import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { IdleCpu } from '../idle-cpu.ts';
import { day, load, num, sentence } from './format.ts';
import { ofRuns } from './types.ts';

/** The idle demo on a host running nothing else, and the same demo with one console page open. */
const RUNS = [
  { path: resultsFile('idle-cpu.quiet.json'), label: 'idle, no page open' },
  { path: resultsFile('idle-cpu.console-open.json'), label: 'one console page open' },
] as const;

/** Each process's share of a core over one window, idle and with the console open. */
export const idleDemo = ofRuns<IdleCpu>(RUNS, (runs, link) => {
  const names = [...new Set(runs.flatMap(({ results }) => results.processes.map((found) => found.name)))];
  const share = (results: IdleCpu, name: string) => {
    const found = results.processes.find((candidate) => candidate.name === name);
    return found ? num(found.percentOfCore, 2) : '—';
  };
  const caption = runs.map(({ path, label, results }) => {
    const after =
      results.demoUptimeSeconds === undefined
        ? ''
        : `, starting ${num(results.demoUptimeSeconds)} s after \`./dev demo\``;
    return (
      `${label}: ${link(path)}, one ${num(results.seconds)} s window${after}, revision \`${results.revision}\`, ` +
      `${day(results.date)}, ${load(results.loadavg.before, results.loadavg.after)}`
    );
  });
  return [
    markdownTable(
      ['process', ...runs.map(({ label }) => `% of a core, ${label}`)],
      [
        ...names.map((name) => [name, ...runs.map(({ results }) => share(results, name))]),
        [
          'all of these (PostgreSQL not counted)',
          ...runs.map(({ results }) => `**${num(results.total.percentOfCore, 2)}**`),
        ],
      ],
    ),
    sentence(caption),
  ].join('\n\n');
});
