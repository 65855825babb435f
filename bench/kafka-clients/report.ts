/** The results file: each round's measurements, the medians per client, the ratio, and its Markdown. */

import { markdownTableLinesOf } from '@outbox/devstack/table';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import type { ThroughputRound } from '../relay/throughputVariants.ts';
import type { RunHeader } from '../support/environment.ts';
import { median, pairedRatio, round, times } from '../support/stats.ts';
import type { ApplyMeasurement } from './consumerApply.ts';
import { CLIENTS, params } from './params.ts';

/** One client in one round: its relay's drain and its consumer's catch-up. */
export type ClientRound = {
  round: number;
  client: KafkaClientName;
  relay: ThroughputRound;
  consumer: ApplyMeasurement;
};

export type MetricSummary = {
  key: string;
  label: string;
  /** Per client: the median over rounds and each round's value. */
  byClient: Record<KafkaClientName, { median: number; perRound: number[] }>;
  /** platformatic ÷ kafkajs, paired per round, median over rounds. */
  ratio: { median: number; perRound: number[] };
};

export type Report = RunHeader & {
  benchmark: 'kafka-clients';
  label: string;
  revision: string | undefined;
  kafka: { version: string; broker: string };
  parameters: typeof params;
  loadavgBefore: number[];
  loadavgAfter: number[];
  durationSec: number;
  rounds: ClientRound[];
  metrics: MetricSummary[];
};

const perThousand = (seconds: number | undefined, events: number) =>
  ((seconds ?? Number.NaN) * 1000) / events;

/** What the table compares, each read from a round of one client. */
const METRICS: { key: string; label: string; value: (r: ClientRound) => number }[] = [
  { key: 'relayEventsPerSec', label: 'relay backlog drain, events/s', value: (r) => r.relay.eventsPerSec },
  {
    key: 'relayCpu',
    label: 'relay process, CPU s per 1,000 events published',
    value: (r) => perThousand(r.relay.cpu.seconds.relays, r.relay.events),
  },
  {
    key: 'relayBrokerCpu',
    label: 'broker, CPU s per 1,000 events published',
    value: (r) => perThousand(r.relay.cpu.seconds.broker, r.relay.events),
  },
  {
    key: 'consumerEventsPerSec',
    label: 'consumer apply rate (inventory), events/s',
    value: (r) => r.consumer.eventsPerSec,
  },
  {
    key: 'consumerCpu',
    label: 'inventory process, CPU s per 1,000 events applied',
    value: (r) => perThousand(r.consumer.cpu.seconds.consumer, r.consumer.events),
  },
  {
    key: 'consumerBrokerCpu',
    label: 'broker, CPU s per 1,000 events applied',
    value: (r) => perThousand(r.consumer.cpu.seconds.broker, r.consumer.events),
  },
  {
    key: 'consumerPostgresCpu',
    label: 'PostgreSQL, CPU s per 1,000 events applied',
    value: (r) => perThousand(r.consumer.cpu.seconds.postgres, r.consumer.events),
  },
];

export function summarize(rounds: ClientRound[]): MetricSummary[] {
  return METRICS.map((metric) => {
    const inRound = (r: number, client: string) => {
      const found = rounds.find((one) => one.round === r && one.client === client);
      return found ? round(metric.value(found), 4) : undefined;
    };
    const byClient = Object.fromEntries(
      CLIENTS.map((client) => {
        const perRound = rounds.filter((r) => r.client === client).map((r) => round(metric.value(r), 4));
        return [client, { median: round(median(perRound), 4), perRound }];
      }),
    ) as MetricSummary['byClient'];
    return {
      key: metric.key,
      label: metric.label,
      byClient,
      ratio: pairedRatio(params.rounds, inRound, 'platformatic', 'kafkajs'),
    };
  });
}

const figure = (value: number) => (Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(3));

export function markdownReport(report: Report): string {
  const lines = [`# Kafka clients side by side (${report.label})`, ''];
  lines.push(
    `${report.date} · revision ${report.revision ?? 'unknown'} · ${report.machine.cpuModel} × ${report.machine.cpus} · Node ${report.node} · ${report.postgres.version} · Kafka ${report.kafka.version} (${report.kafka.broker}) · load average (1, 5, 15 min) before ${report.loadavgBefore.join(', ')}, after ${report.loadavgAfter.join(', ')} · ${report.durationSec} s`,
    '',
    `${params.rounds} rounds, the clients' order alternating (kafkajs first in rounds 1, 3, …). Relay: one relay process (KAFKA_CLIENT=<client>, batches of ${params.batchSize}, ${params.topicPartitions} partitions) drains ${params.relayEvents} outbox rows committed at once onto ${params.history} published ones, timed from the commit to the last row marked published; warm-up ${params.warmupEvents} rows per client. Consumer: a fresh inventory process (KAFKA_CLIENT=<client>, a new consumer group) applies ${params.consumerEvents} ORDER_CREATED events from the beginning of the topic, timed from the first event's transaction to the last recorded. CPU from /proc over each window.`,
    '',
    '## Medians over rounds',
    '',
    ...markdownTableLinesOf(report.metrics, {
      '': (m) => m.label,
      kafkajs: (m) => figure(m.byClient.kafkajs.median),
      '@platformatic/kafka': (m) => figure(m.byClient.platformatic.median),
      'platformatic ÷ kafkajs': (m) => times(m.ratio.median, 3),
    }),
    '',
    'The ratio is paired per round (both clients measured in the same round), then the median over rounds.',
    '',
    '## Every round',
    '',
    ...markdownTableLinesOf(report.rounds, {
      round: (r) => r.round + 1,
      client: (r) => r.client,
      'relay events/s': (r) => r.relay.eventsPerSec.toFixed(0),
      'relay CPU s': (r) => r.relay.cpu.seconds.relays,
      'consumer events/s': (r) => r.consumer.eventsPerSec.toFixed(0),
      'inventory CPU s': (r) => r.consumer.cpu.seconds.consumer,
      'machine busy (relay / consumer)': (r) => `${r.relay.cpu.machineBusy} / ${r.consumer.cpu.machineBusy}`,
    }),
    '',
  );
  return lines.join('\n');
}
