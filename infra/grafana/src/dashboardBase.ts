import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { prometheus } from './datasources.ts';

// What every dashboard of this project shares: the "outbox" tag and a dropdown linking them all,
// firing alerts drawn as annotations, a 15-minute window refreshed every 10 s, read-only
// (they are provisioned from this code; edits in the UI would be lost on the next deploy).

export function dashboardBase(uid: string, title: string, description: string): dashboard.DashboardBuilder {
  return new dashboard.DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags(['outbox'])
    .readonly()
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .refresh('10s')
    .time({ from: 'now-15m', to: 'now' })
    .timezone('browser')
    .annotation(
      new dashboard.AnnotationQueryBuilder()
        .name('Alerts firing')
        .datasource(prometheus)
        .enable(true)
        .iconColor('red')
        // Each firing alert of infra/prometheus/alerts.yml as a region on every time series.
        .expr('ALERTS{alertstate="firing"}')
        .step('30s')
        .titleFormat('{{alertname}}')
        .textFormat('{{job}} {{severity}}')
        .useValueForTime(false),
    )
    .link(
      new dashboard.DashboardLinkBuilder('Outbox dashboards')
        .type(dashboard.DashboardLinkType.Dashboards)
        .tags(['outbox'])
        .asDropdown(true)
        .includeVars(false)
        .keepTime(true),
    );
}

/** A multi-value variable over the values of one label, "All" selected. */
export function labelVariable(options: {
  name: string;
  label: string;
  description: string;
  /** e.g. `label_values(outbox_events, job)` */
  query: string;
}): dashboard.QueryVariableBuilder {
  return new dashboard.QueryVariableBuilder(options.name)
    .label(options.label)
    .description(options.description)
    .datasource(prometheus)
    .definition(options.query)
    .query({ query: options.query, refId: 'PrometheusVariableQueryEditor-VariableQuery', qryType: 1 })
    .includeAll(true)
    .multi(true)
    .allValue('.*')
    .current({ selected: true, text: ['All'], value: ['$__all'] })
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .sort(dashboard.VariableSort.AlphabeticalAsc);
}
