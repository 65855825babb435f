import { defineConfig } from 'vitest/config';

// One vitest run for the whole monorepo (`npm test`): a single global setup starts the one Kafka
// broker that all test files share. Each file runs in its own process (pool: forks) with its own
// databases, topics and consumer groups, so files can run in parallel.
// A package's `npm test` (and `turbo run test`) runs this same config filtered to its folder.
export default defineConfig({
  test: {
    include: [
      '{apps,packages,tools,infra}/*/{src,test}/**/*.test.ts',
      'tests/**/*.test.ts',
      'bench/**/*.test.ts',
    ],
    globalSetup: ['tools/devstack/src/testing/globalSetup.ts'],
    setupFiles: ['tools/devstack/src/testing/workerSetup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: process.env.CI ? ['default', 'junit'] : ['default'],
    outputFile: { junit: 'test-results/junit.xml' },
  },
});
