// The checks both rule sets share (the product's and the lab's): file length, function length
// (declaration to closing brace) and import cycles, each exception named with its reason, and a
// failure once an exception no longer applies.
import { describe, expect, it } from 'vitest';
import { importCycles, type SourceFile } from './productionCode.ts';

export type Bounds = {
  title: string;
  files: SourceFile[];
  /** A floor on how many files were read, so a glob that stops matching fails instead of passing. */
  minFiles: number;
  maxFileLines: number;
  maxFunctionLines: number;
  /** Files over the bound, with why. */
  longFiles: Record<string, string>;
  /** Functions over the bound (`path name`), with why. */
  longFunctions: Record<string, string>;
  /** Import cycles (their files, sorted, space-separated), with why. */
  cycles: Record<string, string>;
};

export function describeSmallAndAcyclic(bounds: Bounds): void {
  const { files, maxFileLines, maxFunctionLines, longFiles, longFunctions, cycles } = bounds;
  const isLong = (file: SourceFile, fn: SourceFile['functions'][number]) =>
    fn.lines > maxFunctionLines && !(`${file.path} ${fn.name}` in longFunctions);

  describe(bounds.title, () => {
    it(`has no file over ${maxFileLines} lines but the listed ones`, () => {
      expect(files.length).toBeGreaterThan(bounds.minFiles);
      const long = files
        .filter((file) => file.lines > maxFileLines && !(file.path in longFiles))
        .map((file) => `${file.path} (${file.lines} lines)`);
      expect(long).toEqual([]);
    });

    it(`has no function over ${maxFunctionLines} lines but the listed ones`, () => {
      const long = files.flatMap((file) =>
        file.functions
          .filter((fn) => isLong(file, fn))
          .map((fn) => `${file.path}:${fn.line} ${fn.name} (${fn.lines} lines)`),
      );
      expect(long).toEqual([]);
    });

    it('has no import cycle but the listed ones', () => {
      const found = importCycles(files).map((cycle) => cycle.join(' '));
      expect(found.filter((cycle) => !(cycle in cycles))).toEqual([]);
    });

    it('lists no exception that no longer applies', () => {
      const found = importCycles(files).map((cycle) => cycle.join(' '));
      const stale = [
        ...Object.keys(longFiles).filter(
          (path) => !files.some((file) => file.path === path && file.lines > maxFileLines),
        ),
        ...Object.keys(longFunctions).filter(
          (key) =>
            !files.some((file) =>
              file.functions.some((fn) => `${file.path} ${fn.name}` === key && fn.lines > maxFunctionLines),
            ),
        ),
        ...Object.keys(cycles).filter((key) => !found.includes(key)),
      ];
      expect(stale).toEqual([]);
    });
  });
}
