import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { dashboardBase, labelVariable } from '../dashboardBase.ts';
import { quantiles, statPanel, timeseriesPanel } from '../panels.ts';

const api = 'job="orders", route=~"$route"';
const requests = `rate(http_requests_total{${api}}[$__rate_interval])`;
const answered = (status: string) =>
  `rate(http_requests_total{${api}, status=~"${status}"}[$__rate_interval])`;

/** The orders API, RED: rate, errors, duration. */
export function ordersApi(): dashboard.Dashboard {
  return dashboardBase(
    'outbox-orders-api',
    'Orders API',
    'The HTTP API of the orders service (RED): requests per second, error ratio (5xx: our fault, 4xx: the client\'s), and duration p50/p95/p99 by route pattern. docs/runbooks.md, "Dashboards".',
  )
    .withVariable(
      labelVariable({
        name: 'route',
        label: 'Route',
        description: 'Route patterns of the orders API (unmatched: no route matched).',
        query: 'label_values(http_requests_total{job="orders"}, route)',
      }),
    )
    .withPanel(
      statPanel({
        id: 1,
        title: 'Requests per second',
        description: 'All requests answered by the orders API, per second.',
        unit: 'reqps',
        decimals: 2,
        width: 8,
        queries: [{ expr: `sum(${requests})`, legend: 'requests' }],
      }),
    )
    .withPanel(
      statPanel({
        id: 2,
        title: '5xx ratio',
        description: 'Share of all requests answered with a 5xx status.',
        unit: 'percentunit',
        decimals: 2,
        width: 8,
        thresholds: [
          { color: 'green', value: null },
          { color: 'orange', value: 0.001 },
          { color: 'red', value: 0.01 },
        ],
        queries: [{ expr: `(sum(${answered('5..')}) or vector(0)) / sum(${requests})`, legend: '5xx' }],
      }),
    )
    .withPanel(
      statPanel({
        id: 3,
        title: 'p99 duration',
        description: 'p99 time to answer a request, all routes.',
        unit: 's',
        decimals: 3,
        width: 8,
        thresholds: [
          { color: 'green', value: null },
          { color: 'orange', value: 0.25 },
          { color: 'red', value: 1 },
        ],
        queries: [
          {
            expr: `histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{${api}}[$__rate_interval])))`,
            legend: 'p99',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 4,
        title: 'Request rate by route and status',
        description: 'Requests answered per second, by method, route pattern and status code.',
        unit: 'reqps',
        min: 0,
        width: 24,
        sortTooltip: true,
        queries: [
          { expr: `sum by (method, route, status) (${requests})`, legend: '{{method}} {{route}} {{status}}' },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 5,
        title: '5xx error ratio by route',
        description:
          'Share of requests answered with a 5xx status (a failure of the service: database down, pool exhausted answers 503), per route.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        sortTooltip: true,
        thresholds: [
          { color: 'green', value: null },
          { color: 'red', value: 0.01 },
        ],
        queries: [
          {
            // `or 0 * requests`: a route without errors shows 0, not a gap.
            expr: `(sum by (route) (${answered('5..')}) or 0 * sum by (route) (${requests})) / sum by (route) (${requests})`,
            legend: '{{route}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 6,
        title: '4xx ratio by route',
        description:
          'Share of requests answered with a 4xx status (invalid body, unknown order, unmatched route): usually the client, but a jump after a deploy may be ours.',
        unit: 'percentunit',
        min: 0,
        max: 1,
        sortTooltip: true,
        queries: [
          {
            expr: `(sum by (route) (${answered('4..')}) or 0 * sum by (route) (${requests})) / sum by (route) (${requests})`,
            legend: '{{route}}',
          },
        ],
      }),
    )
    .withPanel(
      timeseriesPanel({
        id: 7,
        title: 'Request duration by route',
        description:
          'Time to answer a request: p50, p95 and p99 per method and route pattern. The dots are exemplars: click one to open the trace of that request.',
        unit: 's',
        min: 0,
        width: 24,
        height: 9,
        sortTooltip: true,
        queries: quantiles('http_request_duration_seconds', 'method, route', api, '{{method}} {{route}}', {
          exemplars: true,
        }),
      }),
    )
    .build();
}
