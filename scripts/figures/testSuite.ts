import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { SuiteDurations } from '../../tools/devstack/src/testing/durationsReporter.ts';
import { day, load, num } from './format.ts';
import type { FigureTable } from './types.ts';

/** The latest committed run of each tier (TEST_DURATIONS_OUT=bench/results/test-suite/test-suite.<tier> ./dev test). */
const RUNS = [
  { path: resultsFile('test-suite.default.json'), label: '`./dev test` (default tier, what CI runs)' },
  { path: resultsFile('test-suite.long.json'), label: '`./dev test --long`' },
] as const;

/** Each tier's time, its file count and its slowest file, from the run's durations file. */
export const testSuite: FigureTable = {
  sources: RUNS.map((run) => run.path),
  render({ read, link }) {
    const runs = RUNS.map((run) => ({ ...run, result: read<SuiteDurations>(run.path) }));
    return markdownTable(
      [
        'run',
        'files',
        'failed / skipped',
        'seconds of tests',
        'files over budget',
        'slowest file',
        'revision, machine, load average',
      ],
      runs.map(({ path, label, result }) => {
        const [slowest] = result.files;
        const over = result.files.filter((f) => f.seconds > f.budgetSeconds).length;
        const inState = (state: string) => result.files.filter((f) => f.state === state).length;
        return [
          label,
          num(result.files.length),
          `${num(inState('failed'))} / ${num(inState('skipped'))}`,
          `**${num(result.wallSeconds)}**`,
          num(over),
          slowest ? `\`${slowest.file.split('/').at(-1)}\`, ${num(slowest.seconds)} s` : '—',
          `\`${result.revision}\`, ${day(result.date)}, ${result.machine.cpuModel} × ${result.machine.cpus}, ` +
            `${load(result.loadavgBefore, result.loadavgAfter)}; ${link(path.replace(/\.json$/, '.md'))}`,
        ];
      }),
    );
  },
};
