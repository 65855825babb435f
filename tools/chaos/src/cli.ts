// npm run chaos -- <scenario|all|cluster|cdc|failover|dual-writes|compose> [--json file] [--markdown file] [--seed n] [--repeat n] [--kafka-client kafkajs|platformatic] [--group-protocol classic|consumer]
// Runs chaos scenarios against real processes and prints and writes each verdict (docs/chaos.md).
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kafkaClient, kafkaGroupProtocol } from '@outbox/runtime/config';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import { startOwnBroker } from './faults/ownBroker.ts';
import { formatText, writeReports } from './report.ts';
import { runScenario, type ScenarioReport } from './runner.ts';
import { ALL_SCENARIOS, findScenario, GROUPS } from './scenarios/index.ts';

fixKafkajsIdleTimerLoop();
const resultsDir = join(import.meta.dirname, '../../../test-results/chaos');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'string', default: join(resultsDir, 'chaos.json') },
    markdown: { type: 'string', default: join(resultsDir, 'chaos.md') },
    seed: { type: 'string' },
    // Each scenario n times in a row, every run in the reports: a race is attempted, not hit, by one run.
    repeat: { type: 'string', default: '1' },
    'kafka-client': { type: 'string' },
    'group-protocol': { type: 'string' },
  },
});

const [which] = positionals;
// KAFKA_CLIENT of every process the run starts, checked as each process checks it.
const kafkaClientOfRun =
  values['kafka-client'] === undefined ? undefined : kafkaClient.parse(values['kafka-client']);
// KAFKA_GROUP_PROTOCOL of every consumer the run starts; `consumer` needs --kafka-client platformatic.
const groupProtocolOfRun =
  values['group-protocol'] === undefined ? undefined : kafkaGroupProtocol.parse(values['group-protocol']);
if (groupProtocolOfRun === 'consumer' && kafkaClientOfRun !== 'platformatic') {
  console.error('--group-protocol consumer needs --kafka-client platformatic: kafkajs speaks only classic');
  process.exit(64);
}
const selected = which ? (GROUPS[which] ?? [findScenario(which)]) : [];
const repeat = Number(values.repeat);
if (
  selected.length === 0 ||
  selected.some((scenario) => scenario === undefined) ||
  !Number.isInteger(repeat) ||
  repeat < 1
) {
  const names = ALL_SCENARIOS.map((scenario) => `  ${scenario.name}`).join('\n');
  console.error(
    `usage: npm run chaos -- <scenario|all|cluster|cdc|failover|dual-writes|compose> [--json file] [--markdown file] [--seed n] [--repeat n] [--kafka-client kafkajs|platformatic] [--group-protocol classic|consumer]\nscenarios:\n${names}`,
  );
  process.exit(64);
}

// Scenarios that leave the broker alone share one, started here; the others start their own.
const needsShared = selected.some(
  (scenario) => !scenario?.needs?.ownBroker && !scenario?.needs?.cluster && !scenario?.needs?.compose,
);
const shared = needsShared ? await startOwnBroker('shared') : undefined;
const reports: ScenarioReport[] = [];
try {
  for (const scenario of selected.flatMap((one) => Array<typeof one>(repeat).fill(one))) {
    if (!scenario) continue;
    const report = await runScenario(scenario, {
      ...(shared ? { kafkaBrokers: shared.broker.brokers } : {}),
      ...(values.seed ? { seed: Number(values.seed) } : {}),
      ...(kafkaClientOfRun ? { kafkaClient: kafkaClientOfRun } : {}),
      ...(groupProtocolOfRun ? { groupProtocol: groupProtocolOfRun } : {}),
      log: (line) => console.error(line),
    });
    reports.push(report);
    console.log(formatText(report));
    writeReports(reports, { json: values.json, markdown: values.markdown });
  }
} finally {
  await shared?.dispose();
}
console.log(`\nreports: ${values.json}, ${values.markdown}`);
process.exit(reports.every((report) => report.passed) ? 0 : 1);
