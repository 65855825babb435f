import { configDefaults, defineConfig } from 'vitest/config';
import { ALONE, BUDGETS, DEFAULT_BUDGET_SECONDS, LONG_TIER } from './test-budgets.ts';
import DurationsReporter from './tools/devstack/src/testing/durationsReporter.ts';

// One vitest run for the whole monorepo (`npm test`): a single global setup starts the one Kafka
// broker that all test files share. Each file runs in its own process (pool: forks) with its own
// databases, topics and consumer groups, so files can run in parallel.
// A package's `npm test` (and `turbo run test`) runs this same config filtered to its folder.
//
// TEST_TIER picks the files (test-budgets.ts): `default` is what `./dev test` and CI run, `long`
// the files kept for `./dev test --long`; unset, every file (a developer naming one file finds it).
const tier = process.env.TEST_TIER ?? 'all';
if (!['default', 'long', 'all'].includes(tier)) {
  throw new Error(`TEST_TIER=${tier}: expected default, long or all`);
}
const longFiles = Object.keys(LONG_TIER);
const every = [
  '{apps,packages,tools,infra}/*/{src,test}/**/*.test.ts',
  'tests/**/*.test.ts',
  'bench/**/*.test.ts',
];
const exclude = [...configDefaults.exclude, ...(tier === 'default' ? longFiles : [])];

export default defineConfig({
  test: {
    globalSetup: ['tools/devstack/src/testing/globalSetup.ts'],
    setupFiles: ['tools/devstack/src/testing/workerSetup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two groups, one after the other: most files two at a time (on 2 cores, one file's waits are
    // the other's CPU), then the files that must have the machine to themselves (test-budgets.ts).
    projects: [
      {
        extends: true,
        test: {
          name: 'together',
          include: tier === 'long' ? [] : every,
          exclude: [...exclude, ...ALONE],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          // The long tier is all windows of load and faults: its files run alone.
          include: tier === 'long' ? longFiles : [...ALONE],
          exclude,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
    reporters: [
      'default',
      ...(process.env.CI ? (['junit'] as const) : []),
      new DurationsReporter({
        tier,
        budgets: BUDGETS,
        defaultBudgetSeconds: DEFAULT_BUDGET_SECONDS,
        out: process.env.TEST_DURATIONS_OUT ?? `test-results/test-durations.${tier}`,
      }),
    ],
    outputFile: { junit: 'test-results/junit.xml' },
  },
});
