import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, seconds } from './chaos.ts';
import { ofFile } from './types.ts';

const CLUSTER = resultsFile('chaos.cluster.json');

/** Each cluster scenario's fault, in the words of a reader planning a deployment. */
const WHAT_BREAKS: Record<string, string> = {
  'cluster-leader-kill': '`kill -9` of the broker leading the most partitions, back 10 s later',
  'cluster-two-brokers-down':
    'two of three brokers `kill -9`ed for 10 s (fewer replicas than `min.insync.replicas`, quorum lost)',
  'cluster-rolling-restart': 'rolling restart: each broker stopped and started in turn',
  'cluster-consumer-failover': 'the second instance of every service `kill -9`ed mid-load, back 10 s later',
  'cluster-relay-failover': 'one relay of each outbox `kill -9`ed mid-batch, back 10 s later',
};

/** `npm run chaos -- cluster` for production.md: what each fault cost, without the chaos suite's detail. */
export const brokerFailover = ofFile<ChaosReport[]>(CLUSTER, (reports, link) =>
  [
    markdownTable(
      ['what breaks', 'every invariant', 'longest stretch with nothing published / nothing applied'],
      reports.map((report) => [
        WHAT_BREAKS[report.scenario] ?? `\`${report.scenario}\``,
        report.invariants.every((invariant) => invariant.passed) ? 'held' : '**broken**',
        `${seconds(report.progress?.longestWithoutPublishingMs)} / ${seconds(report.progress?.longestWithoutApplyingMs)}`,
      ]),
    ),
    `${link(CLUSTER)}.`,
  ].join('\n\n'),
);
