import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { outboxDashboard } from '../outboxDashboard.ts';
import { timeseriesPanel } from '../panels.ts';

/** One order's way through the system, as rates, on one screen. */
export function orderFlow(): dashboard.Dashboard {
  return outboxDashboard(
    'outbox-order-flow',
    'Order flow overview',
    "One order's way through the system, as rates: placed → published by relay-orders → applied by inventory and billing → their replies published → applied by orders → confirmed or cancelled.",
  )
    .withPanel(
      timeseriesPanel({
        id: 1,
        title: 'Orders placed',
        description:
          'POST /orders answered 201, per second: each is an order and its ORDER_CREATED event committed together.',
        unit: 'ops',
        queries: [
          {
            expr: 'sum(rate(http_requests_total{job="orders", route="/orders", method="POST", status="201"}[$__rate_interval]))',
            legend: 'orders placed',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 2,
        title: 'Published by each relay',
        description: 'Events the three relays got acknowledged by Kafka, per second, by event type.',
        unit: 'ops',
        queries: [
          {
            expr: 'sum by (job, event_type) (rate(outbox_published_total[$__rate_interval]))',
            legend: '{{job}} {{event_type}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 3,
        title: 'Applied by each consumer',
        description:
          'Events applied (not duplicates) per second by inventory, billing and the orders saga, by event type.',
        unit: 'ops',
        queries: [
          {
            expr: 'sum by (consumer, event_type) (rate(consumer_events_total{result="applied"}[$__rate_interval]))',
            legend: '{{consumer}} {{event_type}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 4,
        title: 'Saga outcomes',
        description:
          'Orders confirmed and cancelled per second (the decisions the orders service published).',
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
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 5,
        title: 'Waiting in the outboxes',
        description: 'Events committed but not yet published, per relay: the backlog an outage builds up.',
        unit: 'short',
        queries: [{ expr: 'max by (job) (outbox_events{status=~"pending|in_flight"})', legend: '{{job}}' }],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 6,
        title: 'End-to-end latency (p95)',
        description:
          'Commit to broker ack at each relay, and commit to applied at each consumer: where an order spends its time. The dots are exemplars: click one to open the trace of that event.',
        unit: 's',
        queries: [
          {
            expr: 'histogram_quantile(0.95, sum by (job, le) (rate(outbox_commit_to_publish_seconds_bucket[$__rate_interval])))',
            legend: 'publish {{job}}',
            exemplars: true,
          },
          {
            expr: 'histogram_quantile(0.95, sum by (consumer, le) (rate(consumer_commit_to_consume_seconds_bucket[$__rate_interval])))',
            legend: 'consume {{consumer}}',
            exemplars: true,
          },
        ],
      }),
    )
    .build();
}
