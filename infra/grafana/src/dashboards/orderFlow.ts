import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { liveCharts } from '../charts.ts';
import { dashboardBase } from '../dashboardBase.ts';
import { timeseriesPanel } from '../panels.ts';

/**
 * One order's way through the system, as rates, on one screen: the charts of src/charts.ts, which
 * the web console draws from the same definitions. Two charts a row, in the console's order.
 */
export function orderFlow(): dashboard.Dashboard {
  const builder = dashboardBase(
    'outbox-order-flow',
    'Order flow overview',
    "One order's way through the system: orders accepted → published by the relays → applied by the consumers, the backlog and age an outage builds up, end-to-end latency, dead letters, lag and the saga's outcomes. The web console draws the same charts from the same queries (infra/grafana/src/charts.ts).",
  );
  liveCharts.forEach((chart, index) => {
    builder.withPanel(
      timeseriesPanel({
        id: index + 1,
        title: chart.title,
        description: chart.description,
        unit: chart.unit,
        min: 0,
        queries: chart.queries,
        ...(chart.threshold
          ? {
              thresholds: [
                { color: 'green', value: null },
                { color: 'red', value: chart.threshold.value },
              ],
            }
          : {}),
      }),
    );
  });
  return builder.build();
}
