import { REST_OF_TREE, readSourceFiles } from './productionCode.ts';
import { describeSmallAndAcyclic } from './smallAndAcyclic.ts';

// What is neither product nor lab (the tests' support code, the seeds, the Grafana and AsyncAPI
// generators, the root configs) under the lab's bounds, so that the three rule sets together cover
// every TypeScript file of the tree but the test files themselves.
describeSmallAndAcyclic({
  title: 'the rest of the tree is small and acyclic',
  files: readSourceFiles(REST_OF_TREE.globs, REST_OF_TREE.except),
  minFiles: 30,
  maxFileLines: 400,
  maxFunctionLines: 80,
  longFiles: {},
  // Declarative tables only: each returns one Grafana dashboard, its panels in reading order.
  longFunctions: {
    'infra/grafana/src/dashboards/consumers.ts consumers': 'the consumers dashboard, one object literal',
    'infra/grafana/src/dashboards/ordersApi.ts ordersApi': 'the orders API dashboard, one object literal',
    'infra/grafana/src/dashboards/outbox.ts outboxOverview': 'the outbox dashboard, one object literal',
  },
  cycles: {},
});
