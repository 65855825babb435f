import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { dashboardBase, labelVariable } from '../dashboardBase.ts';
import { quantiles, statPanel, timeseriesPanel } from '../panels.ts';

const relays = 'job=~"$job"';

/** The relays: is each outbox drained, how fast, how many attempts fail, how late events are. */
export function outboxOverview(): dashboard.Dashboard {
  return dashboardBase(
    'outbox-overview',
    'Outbox overview',
    'The relays: are the six processes scraped, how many events wait in each outbox and for how long, how fast each relay publishes them and how many attempts fail, the commit-to-publish latency, dead letters, lease takeovers and the duration of each relay step. docs/runbooks.md, "Dashboards".',
  )
    .withVariable(
      labelVariable({
        name: 'job',
        label: 'Relay',
        description: 'The relays to show (one per service database).',
        query: 'label_values(outbox_events, job)',
      }),
    )
    .withPanel(
      statPanel({
        id: 1,
        title: 'Services up',
        description:
          "1 when Prometheus scraped the process's /metrics on its last attempt: the three services and the relay of each service database.",
        unit: 'none',
        width: 24,
        background: true,
        queries: [
          {
            expr: 'up{job=~"orders|inventory|billing|relay-orders|relay-inventory|relay-billing"}',
            legend: '{{job}}',
            instant: true,
          },
        ],
        thresholds: [
          { color: 'red', value: null },
          { color: 'green', value: 1 },
        ],
        mappings: [
          {
            type: dashboard.MappingType.ValueToText,
            options: {
              '0': { text: 'DOWN', color: 'red', index: 0 },
              '1': { text: 'UP', color: 'green', index: 1 },
            },
          },
        ],
      }),
    )
    .withRow(new dashboard.RowBuilder('Backlog (saturation)').id(100))
    .withPanel(
      timeseriesPanel({
        id: 2,
        title: 'Outbox backlog by status',
        description:
          'Events written to an outbox table and not yet published to Kafka, per relay (one relay per service database) and status: pending (waiting to be claimed) or in_flight (claimed by a relay, lease running). A backlog that keeps growing means that relay is down or slower than the writers (alert OutboxBacklogTooHigh above 1000).',
        unit: 'short',
        min: 0,
        queries: [
          {
            expr: `max by (job, status) (outbox_events{${relays}, status=~"pending|in_flight"})`,
            legend: '{{job}} {{status}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 5,
        title: 'Oldest unpublished event age',
        description:
          'Age of the oldest event not yet published (pending or in flight), per relay; 0 when the outbox is drained. Consumers see changes at least this late (alert OutboxOldestPendingEventTooOld above 30 s).',
        unit: 's',
        min: 0,
        sortTooltip: true,
        thresholds: [
          { color: 'green', value: null },
          { color: 'red', value: 30 },
        ],
        queries: [
          { expr: `max by (job) (outbox_oldest_unpublished_age_seconds{${relays}})`, legend: '{{job}}' },
        ],
      }),
    )
    .withRow(new dashboard.RowBuilder('Publishing (rate, errors)').id(101))
    .withPanel(
      timeseriesPanel({
        id: 3,
        title: 'Events published per relay',
        description: 'Outbox events each relay published to Kafka (acknowledged by the broker), per second.',
        unit: 'ops',
        min: 0,
        queries: [
          {
            expr: `sum by (job) (rate(outbox_published_total{${relays}}[$__rate_interval]))`,
            legend: '{{job}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 6,
        title: 'Events published by event type',
        description:
          'Events acknowledged by the broker per second, by CloudEvents type, over the selected relays.',
        unit: 'ops',
        min: 0,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (event_type) (rate(outbox_published_total{${relays}}[$__rate_interval]))`,
            legend: '{{event_type}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 7,
        title: 'Publish error ratio',
        description:
          'Failed publish attempts / all publish attempts (failed + acknowledged), per relay. A relay that has published nothing yet counts as 0 published (alert OutboxPublishErrorRatioHigh above 5% for 2 minutes).',
        unit: 'percentunit',
        min: 0,
        max: 1,
        sortTooltip: true,
        thresholds: [
          { color: 'green', value: null },
          { color: 'red', value: 0.05 },
        ],
        queries: [
          {
            // `or 0 * failures`: a relay with failures and no publication yet still gets a ratio (1).
            expr: `sum by (job) (rate(outbox_publish_failures_total{${relays}}[$__rate_interval])) / (sum by (job) (rate(outbox_publish_failures_total{${relays}}[$__rate_interval])) + (sum by (job) (rate(outbox_published_total{${relays}}[$__rate_interval])) or 0 * sum by (job) (rate(outbox_publish_failures_total{${relays}}[$__rate_interval]))))`,
            legend: '{{job}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 8,
        title: 'Publish failures by reason',
        description:
          'Failed publish attempts per second, per relay and reason: unavailable (broker away, retried), transient (retried), permanent (refused by the broker; dead-lettered after RELAY_MAX_ATTEMPTS).',
        unit: 'ops',
        min: 0,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (job, reason) (rate(outbox_publish_failures_total{${relays}}[$__rate_interval]))`,
            legend: '{{job}} {{reason}}',
          },
        ],
      }),
    )
    .withRow(new dashboard.RowBuilder('Latency (duration)').id(102))
    .withPanel(
      timeseriesPanel({
        id: 9,
        title: 'Commit-to-publish latency',
        description:
          'From the outbox row being written (the business transaction) to the broker acknowledging the event: p50, p95 and p99 per relay (alert OutboxCommitToPublishLatencyHigh: p99 above 5 s for 5 minutes). Normally a few ms plus the relay poll interval. The dots are exemplars: click one to open the trace of that event.',
        unit: 's',
        min: 0,
        sortTooltip: true,
        queries: quantiles('outbox_commit_to_publish_seconds', 'job', relays, '{{job}}', { exemplars: true }),
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 10,
        title: 'Relay batch step duration (p95)',
        description:
          'p95 duration of each step of a relay batch, per relay: claim (lease rows in the database), publish (send to Kafka and wait for acks), mark (record them as published).',
        unit: 's',
        min: 0,
        sortTooltip: true,
        queries: [
          {
            expr: `histogram_quantile(0.95, sum by (job, step, le) (rate(outbox_relay_batch_duration_seconds_bucket{${relays}}[$__rate_interval])))`,
            legend: '{{job}} {{step}}',
          },
        ],
      }),
    )
    .withRow(new dashboard.RowBuilder('Dead letters and lease takeovers').id(103))
    .withPanel(
      timeseriesPanel({
        id: 4,
        title: 'Dead-lettered events (outbox rows in status failed)',
        description:
          'Outbox rows in status failed (given up after RELAY_MAX_ATTEMPTS), per relay. Each holds back the later events of its aggregate until it is redriven (docs/design.md).',
        unit: 'short',
        min: 0,
        queries: [{ expr: `max by (job) (outbox_events{${relays}, status="failed"})`, legend: '{{job}}' }],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 11,
        title: 'Events dead-lettered by the relay',
        description:
          'Events this relay moved to status failed (gave up after RELAY_MAX_ATTEMPTS), per interval, by event type. Each holds back the later events of its aggregate until it is redriven.',
        unit: 'short',
        min: 0,
        width: 6,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (job, event_type) (increase(outbox_dead_lettered_total{${relays}}[$__rate_interval]))`,
            legend: '{{job}} {{event_type}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 12,
        title: 'Leases expired (taken over)',
        description:
          'Events claimed from another relay whose lease had expired, per interval: that relay died or stalled mid-batch, and each of these events may be published twice (consumers deduplicate).',
        unit: 'short',
        min: 0,
        width: 6,
        sortTooltip: true,
        queries: [
          {
            expr: `sum by (job) (increase(outbox_relay_leases_expired_total{${relays}}[$__rate_interval]))`,
            legend: '{{job}}',
          },
        ],
      }),
    )
    .build();
}
