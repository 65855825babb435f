// The live charts of the system, defined once: the "Order flow overview" dashboard is generated
// from this list (dashboards/orderFlow.ts), and the web console draws the same list from the same
// PromQL (apps/console/src/browser/chartsView.ts). Change a chart here and both change: they cannot
// drift. This file imports nothing, so the console reads it without the Grafana SDK.
//
// `$__rate_interval` is Grafana's rate window; the console puts its own window in its place.
// Legends use Grafana's `{{label}}` form, which the console fills in the same way.

export type Query = {
  expr: string;
  legend: string;
  /**
   * Ask Prometheus for the exemplars of this histogram query too: Grafana draws them as dots on
   * the graph, each with a link to its trace (see datasources.ts).
   */
  exemplars?: boolean;
  /** Evaluate once at the end of the range (for stat panels). */
  instant?: boolean;
};

export type Chart = {
  /** Stable name: the console's DOM and tests find a chart by it. */
  id: string;
  title: string;
  description: string;
  /** Grafana's unit ids: `ops` per second, `s` seconds, `short` a count. */
  unit: 'ops' | 's' | 'short';
  queries: Query[];
  /** An alert's threshold, drawn as a line (both in Grafana and in the console). */
  threshold?: { value: number; alert: string };
};

export const liveCharts: Chart[] = [
  {
    id: 'orders-accepted',
    title: 'Orders accepted per second',
    description:
      'POST /orders answered 201, per second: each is an order and its ORDER_CREATED event committed together in one transaction.',
    unit: 'ops',
    queries: [
      {
        expr: 'sum(rate(http_requests_total{job="orders", route="/orders", method="POST", status="201"}[$__rate_interval]))',
        legend: 'orders accepted',
      },
    ],
  },
  {
    id: 'published',
    title: 'Events published per second, per outbox',
    description:
      "Events each outbox's relay got acknowledged by Kafka, per second. It drops to zero while the broker is away, and catches up when it is back.",
    unit: 'ops',
    queries: [{ expr: 'sum by (job) (rate(outbox_published_total[$__rate_interval]))', legend: '{{job}}' }],
  },
  {
    id: 'applied',
    title: 'Events applied per second, per consumer',
    description:
      'Events each consumer applied (not counting duplicates it skipped or events it ignores), per second.',
    unit: 'ops',
    queries: [
      {
        expr: 'sum by (consumer) (rate(consumer_events_total{result="applied"}[$__rate_interval]))',
        legend: '{{consumer}}',
      },
    ],
  },
  {
    id: 'backlog',
    title: 'Outbox backlog',
    description:
      'Events committed to an outbox and not yet published (pending or in flight), per relay: what an outage builds up. Alert OutboxBacklogTooHigh above 1000 for 5 minutes.',
    unit: 'short',
    queries: [
      {
        // As the alert counts it: max over the relays of one database, then pending + in flight.
        expr: 'sum by (job) (max by (job, status) (outbox_events{status=~"pending|in_flight"}))',
        legend: '{{job}}',
      },
    ],
    threshold: { value: 1000, alert: 'OutboxBacklogTooHigh' },
  },
  {
    id: 'oldest-age',
    title: 'Oldest unpublished event',
    description:
      'Age of the oldest event not yet published, per relay; 0 when the outbox is drained. Consumers see changes at least this late. Alert OutboxOldestPendingEventTooOld above 30 s for 30 s.',
    unit: 's',
    queries: [{ expr: 'max by (job) (outbox_oldest_unpublished_age_seconds)', legend: '{{job}}' }],
    threshold: { value: 30, alert: 'OutboxOldestPendingEventTooOld' },
  },
  {
    id: 'latency',
    title: 'End-to-end latency, commit to consumed',
    description:
      "From an event's commit in its outbox to a consumer applying it, p50 and p99 over every consumer: the relay's claim and publish, Kafka, and the consumer. The dots are exemplars: each opens the trace of that event.",
    unit: 's',
    queries: [
      {
        expr: 'histogram_quantile(0.5, sum by (le) (rate(consumer_commit_to_consume_seconds_bucket[$__rate_interval])))',
        legend: 'p50',
        exemplars: true,
      },
      {
        expr: 'histogram_quantile(0.99, sum by (le) (rate(consumer_commit_to_consume_seconds_bucket[$__rate_interval])))',
        legend: 'p99',
      },
    ],
  },
  {
    id: 'dead-letters',
    title: 'Dead letters',
    description:
      'Outbox rows the relay gave up on (status failed, until redriven), per relay, and messages each consumer sent to a dead-letter topic since it started. Alerts OutboxEventDeadLettered and ConsumerEventDeadLettered.',
    unit: 'short',
    queries: [
      { expr: 'max by (job) (outbox_events{status="failed"})', legend: 'outbox {{job}}' },
      { expr: 'sum by (consumer) (consumer_dead_lettered_total)', legend: 'consumer {{consumer}}' },
    ],
  },
  {
    id: 'consumer-lag',
    title: 'Consumer lag',
    description:
      'Messages on each topic a consumer group has not committed yet. Alert ConsumerLagTooHigh above 1000 for 5 minutes.',
    unit: 'short',
    queries: [
      {
        expr: 'sum by (consumer, topic) (max by (job, consumer, topic, partition) (consumer_lag_messages))',
        legend: '{{consumer}} {{topic}}',
      },
    ],
    threshold: { value: 1000, alert: 'ConsumerLagTooHigh' },
  },
  {
    id: 'saga-outcomes',
    title: 'Saga outcomes',
    description: 'Orders confirmed and cancelled per second (the decisions the orders service published).',
    unit: 'ops',
    queries: [
      {
        expr: 'sum(rate(outbox_published_total{event_type="ORDER_CONFIRMED"}[$__rate_interval]))',
        legend: 'confirmed',
      },
      {
        expr: 'sum(rate(outbox_published_total{event_type="ORDER_CANCELLED"}[$__rate_interval]))',
        legend: 'cancelled',
      },
    ],
  },
];

/** Grafana's `{{label}}` legend, filled from a series' labels (an unknown label becomes ''). */
export function legendOf(legend: string, labels: Record<string, string>): string {
  return legend.replace(/\{\{\s*(\w+)\s*\}\}/g, (_match, name: string) => labels[name] ?? '').trim();
}
