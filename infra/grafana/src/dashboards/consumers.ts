import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { dashboardBase, labelVariable } from '../dashboardBase.ts';
import { quantiles, timeseriesPanel } from '../panels.ts';

const services = 'job=~"$job"';

/** The consumers: throughput by result (rate), lag (saturation), dead letters (errors), latency (duration). */
export function consumers(): dashboard.Dashboard {
  return dashboardBase(
    'outbox-consumers',
    'Outbox consumers',
    'The Kafka consumers of orders, inventory and billing: events handled by result (rate), duplicates skipped, lag (saturation), dead letters (errors), handler and commit-to-consume latency (duration). docs/runbooks.md, "Dashboards".',
  )
    .withVariable(
      labelVariable({
        name: 'job',
        label: 'Service',
        description: 'The consuming services to show.',
        query: 'label_values(consumer_events_total, job)',
      }),
    )
    .withRow(new dashboard.RowBuilder('Throughput').id(100))
    .withPanel(
      timeseriesPanel({
        id: 1,
        title: 'Events handled by result',
        description:
          'Events handled per second, per service and result: applied (its effects committed), duplicate (already applied: a redelivery, skipped), ignored (not for this consumer).',
        unit: 'ops',
        min: 0,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (job, result) (rate(consumer_events_total{${services}}[$__rate_interval]))`,
            legend: '{{job}} {{result}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 2,
        title: 'Events applied by event type',
        description: 'Events applied per second, per consumer group and event type.',
        unit: 'ops',
        min: 0,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (consumer, event_type) (rate(consumer_events_total{${services}, result="applied"}[$__rate_interval]))`,
            legend: '{{consumer}} {{event_type}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 3,
        title: 'Duplicates skipped',
        description:
          'Redelivered events each consumer recognised as already applied and skipped, per second. Expected after a rebalance, a consumer restart or a relay lease takeover; a steady stream means offsets are not being committed.',
        unit: 'ops',
        min: 0,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (job, event_type) (rate(consumer_events_total{${services}, result="duplicate"}[$__rate_interval]))`,
            legend: '{{job}} {{event_type}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 4,
        title: 'Duplicate ratio',
        description: 'Share of the events handled that were duplicates, per service.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (job) (rate(consumer_events_total{${services}, result="duplicate"}[$__rate_interval])) / sum by (job) (rate(consumer_events_total{${services}}[$__rate_interval]))`,
            legend: '{{job}}',
          },
        ],
      }),
    )
    .withRow(new dashboard.RowBuilder('Lag and dead letters').id(101))
    .withPanel(
      timeseriesPanel({
        id: 5,
        title: 'Consumer lag',
        description:
          'Messages on the topic that the consumer group has not committed yet, per consumer and topic (sum over partitions; updated every 15 s). Alert ConsumerLagTooHigh above 1000 for 5 minutes.',
        unit: 'short',
        min: 0,
        sortTooltip: true,
        thresholds: [
          { color: 'green', value: null },
          { color: 'red', value: 1000 },
        ],
        queries: [
          {
            // max first: every replica of a consumer reports the group's lag for every partition.
            expr: `sum by (job, consumer, topic) (max by (job, consumer, topic, partition) (consumer_lag_messages{${services}}))`,
            legend: '{{consumer}} {{topic}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 6,
        title: 'Messages dead-lettered',
        description:
          'Unreadable messages each consumer sent to <topic>.dlt, per interval. Their effects are missing until replayed (alert ConsumerEventDeadLettered).',
        unit: 'short',
        min: 0,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (job, consumer, topic) (increase(consumer_dead_lettered_total{${services}}[$__rate_interval]))`,
            legend: '{{consumer}} {{topic}}',
          },
        ],
      }),
    )
    .withRow(new dashboard.RowBuilder('Latency').id(102))
    .withPanel(
      timeseriesPanel({
        id: 7,
        title: 'Handler duration',
        description:
          'Time to apply one event (its transaction, the dedup record and outgoing events): p50, p95 and p99 per service. Applied events only. The dots are exemplars: click one to open the trace of that event.',
        unit: 's',
        min: 0,
        width: 8,
        sortTooltip: true,
        queries: quantiles('consumer_handler_duration_seconds', 'job', services, '{{job}}', {
          exemplars: true,
        }),
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 8,
        title: 'Handler duration p95 by event type',
        description: 'p95 time to apply one event, per consumer group and event type.',
        unit: 's',
        min: 0,
        width: 8,
        sortTooltip: true,
        queries: [
          {
            expr: `histogram_quantile(0.95, sum by (consumer, event_type, le) (rate(consumer_handler_duration_seconds_bucket{${services}}[$__rate_interval])))`,
            legend: '{{consumer}} {{event_type}}',
            exemplars: true,
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 9,
        title: 'Commit-to-consume latency',
        description:
          "From the event's business transaction to this consumer having applied it (relay poll, publish, delivery and the handler): p50, p95 and p99 per service. The dots are exemplars: click one to open the trace of that event.",
        unit: 's',
        min: 0,
        width: 8,
        sortTooltip: true,
        queries: quantiles('consumer_commit_to_consume_seconds', 'job', services, '{{job}}', {
          exemplars: true,
        }),
      }),
    )
    .build();
}
