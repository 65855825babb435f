// The chaos suite as a library: the tests in tests/chaos run scenarios through the same runner
// as the CLI (src/cli.ts).
export { type GroupView, observeGroups } from './groupMembers.ts';
export { DUAL_WRITE_COUNTS, INVARIANTS, type InvariantResult } from './invariants/index.ts';
export type { PartitionFigure } from './partitionWindows.ts';
export { formatDualWriteTable, formatText, writeReports } from './report.ts';
export { runScenario, type ScenarioReport } from './runner.ts';
export type { Scenario } from './scenario.ts';
export { findScenario } from './scenarios/index.ts';
export { startChaosStack } from './stack.ts';
