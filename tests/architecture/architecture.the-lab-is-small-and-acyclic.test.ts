import { LAB_GLOBS, readSourceFiles } from './productionCode.ts';
import { describeSmallAndAcyclic } from './smallAndAcyclic.ts';

// The lab around the product (tools/*/src, bench, scripts: the dev stack, the load generator, the
// chaos suite, the benches) is read and changed as often as the product, under the same rules with
// looser bounds: files of at most 400 lines, functions of at most 80 (declaration to closing brace),
// no import cycle. Exceptions are listed here by name, each with its reason.
describeSmallAndAcyclic({
  title: 'the lab is small and acyclic',
  files: readSourceFiles(LAB_GLOBS),
  minFiles: 100,
  maxFileLines: 400,
  maxFunctionLines: 80,
  longFiles: {},
  // Declarative tables only.
  longFunctions: {},
  cycles: {},
});
