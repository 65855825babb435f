import { markdownTableOf } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { SuiteDurations } from '../../tools/devstack/src/testing/durationsReporter.ts';
import { day, load, num } from './format.ts';
import { ofRuns } from './types.ts';

/** The latest committed run of each tier (TEST_DURATIONS_OUT=bench/results/test-suite/test-suite.<tier> ./dev test). */
const RUNS = [
  { path: resultsFile('test-suite.default.json'), label: '`./dev test` (default tier, what CI runs)' },
  { path: resultsFile('test-suite.long.json'), label: '`./dev test --long`' },
] as const;

/** Each tier's time, its file count and its slowest file, from the run's durations file. */
export const testSuite = ofRuns<SuiteDurations>(RUNS, (runs, link) => {
  const inState = (results: SuiteDurations, state: string) =>
    num(results.files.filter((file) => file.state === state).length);
  return markdownTableOf(runs, {
    run: ({ label }) => label,
    files: ({ results }) => num(results.files.length),
    'failed / skipped': ({ results }) => `${inState(results, 'failed')} / ${inState(results, 'skipped')}`,
    'seconds of tests': ({ results }) => `**${num(results.wallSeconds)}**`,
    'files over budget': ({ results }) =>
      num(results.files.filter((f) => f.seconds > f.budgetSeconds).length),
    'slowest file': ({ results: { files } }) =>
      files[0] ? `\`${files[0].file.split('/').at(-1)}\`, ${num(files[0].seconds)} s` : '—',
    'revision, machine, load average, tracing': ({ path, results }) =>
      `\`${results.revision}\`, ${day(results.date)}, ${results.machine.cpuModel} × ${results.machine.cpus}, ` +
      `${load(results.loadavgBefore, results.loadavgAfter)}, tracing ${results.tracing}; ${link(path.replace(/\.json$/, '.md'))}`,
  });
});
