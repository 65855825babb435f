import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { IdleCpu } from '../idle-cpu.ts';
import { day, load, num, sentence } from './format.ts';
import type { FigureTable } from './types.ts';

/** The idle demo on a host running nothing else, and the same demo with one console page open. */
const RUNS = [
  { path: resultsFile('idle-cpu.quiet.json'), label: 'idle, no page open' },
  { path: resultsFile('idle-cpu.console-open.json'), label: 'one console page open' },
] as const;

/** Each process's share of a core over one window, idle and with the console open. */
export const idleDemo: FigureTable = {
  sources: RUNS.map((run) => run.path),
  render({ read, link }) {
    const runs = RUNS.map((run) => ({ ...run, result: read<IdleCpu>(run.path) }));
    const names = [...new Set(runs.flatMap(({ result }) => result.processes.map((found) => found.name)))];
    const share = (result: IdleCpu, name: string) => {
      const found = result.processes.find((candidate) => candidate.name === name);
      return found ? num(found.percentOfCore, 2) : '—';
    };
    const caption = runs.map(({ path, label, result }) => {
      const after =
        result.demoUptimeSeconds === undefined
          ? ''
          : `, starting ${num(result.demoUptimeSeconds)} s after \`./dev demo\``;
      return (
        `${label}: ${link(path)}, one ${num(result.seconds)} s window${after}, revision \`${result.revision}\`, ` +
        `${day(result.date)}, ${load(result.loadavg.before, result.loadavg.after)}`
      );
    });
    return [
      markdownTable(
        ['process', ...runs.map(({ label }) => `% of a core, ${label}`)],
        [
          ...names.map((name) => [name, ...runs.map(({ result }) => share(result, name))]),
          [
            'all of these (PostgreSQL not counted)',
            ...runs.map(({ result }) => `**${num(result.total.percentOfCore, 2)}**`),
          ],
        ],
      ),
      sentence(caption),
    ].join('\n\n');
  },
};
