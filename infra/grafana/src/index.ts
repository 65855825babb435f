import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { consumers } from './dashboards/consumers.ts';
import { orderFlow } from './dashboards/orderFlow.ts';
import { ordersApi } from './dashboards/ordersApi.ts';
import { outboxOverview } from './dashboards/outbox.ts';

/** Every dashboard, by the file under infra/grafana/dashboards that Grafana provisions. */
export const dashboardFiles: Record<string, () => Dashboard> = {
  'outbox.json': outboxOverview,
  'consumers.json': consumers,
  'orders-api.json': ordersApi,
  'order-flow.json': orderFlow,
};

/** The JSON as checked in: two-space indent and a final newline, so diffs stay readable. */
export function renderDashboard(dashboard: Dashboard): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}
