import { markdownTableOf } from '@outbox/devstack/table';
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
    const inState = (result: SuiteDurations, state: string) =>
      num(result.files.filter((file) => file.state === state).length);
    return markdownTableOf(runs, {
      run: ({ label }) => label,
      files: ({ result }) => num(result.files.length),
      'failed / skipped': ({ result }) => `${inState(result, 'failed')} / ${inState(result, 'skipped')}`,
      'seconds of tests': ({ result }) => `**${num(result.wallSeconds)}**`,
      'files over budget': ({ result }) =>
        num(result.files.filter((f) => f.seconds > f.budgetSeconds).length),
      'slowest file': ({ result: { files } }) =>
        files[0] ? `\`${files[0].file.split('/').at(-1)}\`, ${num(files[0].seconds)} s` : '—',
      'revision, machine, load average': ({ path, result }) =>
        `\`${result.revision}\`, ${day(result.date)}, ${result.machine.cpuModel} × ${result.machine.cpus}, ` +
        `${load(result.loadavgBefore, result.loadavgAfter)}; ${link(path.replace(/\.json$/, '.md'))}`,
    });
  },
};
