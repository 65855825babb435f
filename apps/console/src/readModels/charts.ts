import { legendOf, liveCharts } from '@outbox/grafana/charts';
import type { PrometheusClient } from '../prometheus.ts';
import { errorMessage } from '../services.ts';
import type { ChartsResponse, ChartView } from '../shared/apiTypes.ts';

/** The last five minutes, a point every five seconds: 60 points a series. */
const RANGE_SECONDS = 300;
const STEP_SECONDS = 5;
/**
 * What `$__rate_interval` becomes here. Grafana makes it at least four scrape intervals; 30 s is
 * six scrapes of the demo's Prometheus (5 s) and thirty of the tests' (1 s), so a rate is smooth
 * yet reacts to an outage within seconds.
 */
export const RATE_WINDOW = '30s';

/**
 * The live charts of infra/grafana/src/charts.ts (the same PromQL the "Order flow overview"
 * dashboard runs), read from Prometheus over the last minutes. All series of all charts share one
 * time grid, the shape uPlot draws (aligned data): a missing sample is null, a gap in the line.
 */
export async function chartsView(prometheus: PrometheusClient): Promise<ChartsResponse> {
  const end = Math.floor(Date.now() / 1000 / STEP_SECONDS) * STEP_SECONDS;
  const start = end - RANGE_SECONDS;
  const times: number[] = [];
  for (let t = start; t <= end; t += STEP_SECONDS) times.push(t);
  const index = new Map(times.map((t, i) => [t, i]));

  const charts = await Promise.all(
    liveCharts.map(async (chart): Promise<ChartView> => {
      const view: ChartView = {
        id: chart.id,
        title: chart.title,
        description: chart.description,
        unit: chart.unit,
        queries: chart.queries.map((query) => query.expr),
        series: [],
        ...(chart.threshold ? { threshold: chart.threshold } : {}),
      };
      try {
        for (const query of chart.queries) {
          const expr = query.expr.replaceAll('$__rate_interval', RATE_WINDOW);
          for (const series of await prometheus.queryRange(expr, start, end, STEP_SECONDS)) {
            const values: (number | null)[] = times.map(() => null);
            for (const [t, value] of series.values) {
              const at = index.get(Math.round(t));
              const number = Number(value);
              if (at !== undefined && Number.isFinite(number)) values[at] = number;
            }
            view.series.push({ label: legendOf(query.legend, series.metric) || chart.title, values });
          }
        }
        view.series.sort((a, b) => a.label.localeCompare(b.label));
      } catch (err) {
        view.error = errorMessage(err);
      }
      return view;
    }),
  );
  return { times, rateWindow: RATE_WINDOW, charts };
}
