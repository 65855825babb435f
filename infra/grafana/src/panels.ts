import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import type { Query } from './charts.ts';
import { prometheus } from './datasources.ts';

// Small builders for the panel shapes the dashboards repeat. The Foundation SDK's types are the
// point: a misspelled option, a wrong unit type or a target of the wrong datasource kind fails
// `tsc`, so a broken panel fails CI before any Grafana loads it. (Whether the PromQL itself is
// valid is tested against a real Prometheus: tests/observability.)

export type { Query } from './charts.ts';

const refIds = 'ABCDEFGHIJ';

function target(query: Query, index: number): DataqueryBuilder {
  const builder = new DataqueryBuilder()
    .refId(refIds[index] ?? `Q${index}`)
    .datasource(prometheus)
    .expr(query.expr)
    .legendFormat(query.legend);
  if (query.exemplars) builder.exemplar(true);
  if (query.instant) builder.instant();
  return builder;
}

/** The three quantiles of a latency histogram, each as its own series. */
export function quantiles(
  metric: string,
  by: string,
  selector: string,
  legend: string,
  options: { exemplars?: boolean } = {},
): Query[] {
  return [0.5, 0.95, 0.99].map((q, index) => ({
    expr: `histogram_quantile(${q}, sum by (${by}, le) (rate(${metric}_bucket{${selector}}[$__rate_interval])))`,
    legend: `${legend} p${Math.round(q * 100)}`,
    // One set of exemplars per panel is enough: they are the same observations for every quantile.
    exemplars: options.exemplars === true && index === 0,
  }));
}

type Threshold = { color: string; value: number | null };

function thresholds(steps: Threshold[]): dashboard.ThresholdsConfigBuilder {
  return new dashboard.ThresholdsConfigBuilder().mode(dashboard.ThresholdsMode.Absolute).steps(steps);
}

export type TimeseriesOptions = {
  id: number;
  title: string;
  description: string;
  unit: string;
  queries: Query[];
  width?: number;
  height?: number;
  min?: number;
  max?: number;
  /** Draw these thresholds as lines and areas (an alert's threshold, say). */
  thresholds?: Threshold[];
  /** Largest series first in the tooltip. */
  sortTooltip?: boolean;
};

export function timeseriesPanel(options: TimeseriesOptions): timeseries.PanelBuilder {
  const panel = new timeseries.PanelBuilder()
    .id(options.id)
    .title(options.title)
    .description(options.description)
    .datasource(prometheus)
    .span(options.width ?? 12)
    .height(options.height ?? 8)
    .unit(options.unit)
    .fillOpacity(10)
    .legend(
      new common.VizLegendOptionsBuilder()
        .displayMode(common.LegendDisplayMode.List)
        .placement(common.LegendPlacement.Bottom)
        .showLegend(true),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder()
        .mode(common.TooltipDisplayMode.Multi)
        .sort(options.sortTooltip ? common.SortOrder.Descending : common.SortOrder.None),
    );
  if (options.min !== undefined) panel.min(options.min);
  if (options.max !== undefined) panel.max(options.max);
  if (options.thresholds) {
    panel
      .thresholds(thresholds(options.thresholds))
      .thresholdsStyle(
        new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.LineAndArea),
      );
  }
  options.queries.forEach((query, index) => {
    panel.withTarget(target(query, index));
  });
  return panel;
}

export type StatOptions = {
  id: number;
  title: string;
  description: string;
  unit: string;
  queries: Query[];
  width: number;
  height?: number;
  decimals?: number;
  thresholds?: Threshold[];
  /** Value mappings (e.g. 0 → DOWN, 1 → UP). */
  mappings?: dashboard.ValueMapping[];
  background?: boolean;
};

export function statPanel(options: StatOptions): stat.PanelBuilder {
  const panel = new stat.PanelBuilder()
    .id(options.id)
    .title(options.title)
    .description(options.description)
    .datasource(prometheus)
    .span(options.width)
    .height(options.height ?? 4)
    .unit(options.unit)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).fields('').values(false))
    .colorMode(options.background ? common.BigValueColorMode.Background : common.BigValueColorMode.Value)
    .graphMode(options.background ? common.BigValueGraphMode.None : common.BigValueGraphMode.Area);
  if (options.decimals !== undefined) panel.decimals(options.decimals);
  if (options.thresholds) panel.thresholds(thresholds(options.thresholds));
  if (options.mappings) panel.mappings(options.mappings);
  options.queries.forEach((query, index) => {
    panel.withTarget(target(query, index));
  });
  return panel;
}
