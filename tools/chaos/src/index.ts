// The chaos suite as a library: the tests in tests/chaos run scenarios through the same runner
// as the CLI (src/cli.ts).
export { type GroupMemberView, type GroupObserver, type GroupView, observeGroups } from './groupMembers.ts';
export { checkInvariants, INVARIANTS, type InvariantResult } from './invariants/index.ts';
export type { PartitionFigure } from './partitionWindows.ts';
export {
  formatDualWriteTable,
  formatDuplicatesTable,
  formatMarkdown,
  formatText,
  writeReports,
} from './report.ts';
export { type RunOptions, runScenario, type ScenarioReport } from './runner.ts';

export type { Scenario, ScenarioContext } from './scenario.ts';
export {
  CDC_SCENARIOS,
  CLUSTER_SCENARIOS,
  DUAL_WRITES,
  FAILOVER_SCENARIOS,
  findScenario,
  PROOFS,
  SCENARIOS,
} from './scenarios/index.ts';
export { type ChaosStack, type StackOptions as ChaosStackOptions, startChaosStack } from './stack.ts';
