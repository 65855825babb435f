import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestModule } from 'vitest/node';
import DurationsReporter, { type SuiteDurations } from '../src/testing/durationsReporter.ts';

/** What the reporter reads of a test module: its path, its state and its phases' times. */
function aModule(file: string, seconds: number, state = 'passed'): TestModule {
  const ms = seconds * 1000;
  return {
    moduleId: join('/repo', file),
    state: () => state,
    diagnostic: () => ({
      environmentSetupDuration: 0,
      prepareDuration: ms * 0.1,
      collectDuration: ms * 0.1,
      setupDuration: 0,
      duration: ms * 0.8,
    }),
  } as unknown as TestModule;
}

function run(modules: TestModule[]) {
  const out = join(mkdtempSync(join(tmpdir(), 'durations-')), 'run');
  const reporter = new DurationsReporter({
    tier: 'default',
    budgets: { 'tests/slow.test.ts': 120 },
    defaultBudgetSeconds: 60,
    out,
  });
  reporter.onInit({ config: { root: '/repo' } });
  reporter.onTestRunEnd(modules);
  return JSON.parse(readFileSync(`${out}.json`, 'utf8')) as SuiteDurations;
}

describe('the durations reporter', () => {
  const exitCode = process.exitCode;
  afterEach(() => {
    process.exitCode = exitCode;
    vi.restoreAllMocks();
  });

  it('writes every file with its whole time, slowest first, and passes a run within budget', () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const written = run([aModule('tests/fast.test.ts', 2), aModule('tests/slow.test.ts', 100)]);
    expect(written.files.map((f) => [f.file, f.seconds, f.budgetSeconds])).toEqual([
      ['tests/slow.test.ts', 100, 120],
      ['tests/fast.test.ts', 2, 60],
    ]);
    expect(written.machine.cpus).toBeGreaterThan(0);
    expect(process.exitCode).toBe(exitCode);
  });

  it('fails the run for a file over its budget, naming the file and its time', () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    run([aModule('tests/fast.test.ts', 61), aModule('tests/slow.test.ts', 100)]);
    expect(process.exitCode).toBe(1);
    expect(errors.mock.calls.map(([line]) => line)).toEqual([
      'test budget: tests/fast.test.ts took 61.0 s, over its 60 s budget (test-budgets.ts)',
    ]);
  });
});
