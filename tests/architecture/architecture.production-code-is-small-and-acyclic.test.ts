import { PRODUCTION_GLOBS, readSourceFiles } from './productionCode.ts';
import { describeSmallAndAcyclic } from './smallAndAcyclic.ts';

// The code a reader copies (apps/*/src, packages/*/src) stays readable top to bottom: files of at
// most 300 lines, functions of at most 60 (declaration to closing brace), and no module that imports
// back into one that imports it. Exceptions are listed here by name, each with its reason.
describeSmallAndAcyclic({
  title: 'production code is small and acyclic',
  files: readSourceFiles(PRODUCTION_GLOBS),
  minFiles: 100,
  maxFileLines: 300,
  maxFunctionLines: 60,
  longFiles: {},
  // Declarative tables only.
  longFunctions: {
    'apps/relay/src/engine/metrics.ts createRelayMetrics':
      'declarative table: one metric definition after another',
    'apps/relay/src/cdc/cdcMetrics.ts createCdcMetrics':
      'declarative table: one metric definition after another',
    'packages/outbox/src/cdcConnector.ts renderCdcConnectorConfig':
      "declarative table: the connector's settings, one a line",
  },
  cycles: {},
});
