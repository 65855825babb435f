import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALONE, BUDGETS, FAULT_CLASSES, LONG_TIER } from '../../test-budgets.ts';

const root = join(import.meta.dirname, '../..');

describe('the test budget table (test-budgets.ts)', () => {
  it('keeps a file of every fault class in the default run', () => {
    for (const [fault, file] of Object.entries(FAULT_CLASSES)) {
      expect(existsSync(join(root, file)), `${fault}: ${file} exists`).toBe(true);
      expect(Object.keys(LONG_TIER), `${fault}: ${file} is in the default run`).not.toContain(file);
    }
  });

  it('names only test files that exist', () => {
    for (const file of [...Object.keys(LONG_TIER), ...Object.keys(BUDGETS)])
      expect(existsSync(join(root, file)), file).toBe(true);
    for (const pattern of ALONE) expect(pattern, 'a pattern of test files').toMatch(/\.test\.ts$/);
  });

  it('says, for each file of the long tier, which default file keeps its fault class', () => {
    for (const [file, keeper] of Object.entries(LONG_TIER)) expect(keeper.length, file).toBeGreaterThan(20);
  });
});
