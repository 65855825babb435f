// The dashboards are code (infra/grafana/src, typed by the Grafana Foundation SDK, so `tsc` rejects
// a malformed panel). These tests hold the generated JSON to that code and check what types
// cannot: the layout, and that every latency graph links to traces through exemplars.
// Whether each query is valid PromQL is tested against a real Prometheus (tests/observability).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { describe, expect, it } from 'vitest';
import { liveCharts } from '../src/charts.ts';
import { prometheus, zipkin } from '../src/datasources.ts';
import { dashboardFiles, renderDashboard } from '../src/index.ts';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dashboards');
const files = Object.entries(dashboardFiles).map(([file, build]) => ({ file, dashboard: build() }));

// Read as JSON, the way Grafana reads it (the SDK's own types do not know the Prometheus fields).
type Target = { expr?: string; exemplar?: boolean; datasource?: { uid?: string } };
type PanelJson = {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos?: { x: number; y: number; w: number; h: number };
  datasource?: { uid?: string };
  targets?: Target[];
};
const panelsOf = (dashboard: Dashboard) =>
  (dashboard.panels as PanelJson[]).filter((panel) => panel.type !== 'row');
const rowsOf = (dashboard: Dashboard) =>
  (dashboard.panels as PanelJson[]).filter((panel) => panel.type === 'row');

describe.each(files)('$file', ({ file, dashboard }) => {
  it('is checked in exactly as the code generates it (run node infra/grafana/src/generate.ts)', () => {
    expect(readFileSync(path.join(dir, file), 'utf8')).toBe(renderDashboard(dashboard));
  });

  it('gives every panel a unique id, a description and a place on the 24-column grid, without overlaps', () => {
    const all = [...panelsOf(dashboard), ...rowsOf(dashboard)];
    const ids = all.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Map<string, string>();
    for (const panel of all) {
      if (panel.type !== 'row') expect(panel.description, panel.title).toBeTruthy();
      const grid = panel.gridPos;
      expect(grid, panel.title).toBeDefined();
      if (!grid) continue;
      expect(grid.x + grid.w, panel.title).toBeLessThanOrEqual(24);
      for (let x = grid.x; x < grid.x + grid.w; x++) {
        for (let y = grid.y; y < grid.y + grid.h; y++) {
          const taken = cells.get(`${x},${y}`);
          expect(taken, `${panel.title} overlaps ${taken}`).toBeUndefined();
          cells.set(`${x},${y}`, panel.title ?? '');
        }
      }
    }
  });

  it('queries Prometheus by its provisioned uid in every panel and target', () => {
    for (const panel of panelsOf(dashboard)) {
      expect(panel.datasource?.uid, panel.title).toBe(prometheus.uid);
      for (const target of panel.targets ?? [])
        expect(target.datasource?.uid, panel.title).toBe(prometheus.uid);
    }
  });

  it('shows exemplars (links to traces) on every latency histogram, and only there', () => {
    for (const panel of panelsOf(dashboard)) {
      const targets = panel.targets ?? [];
      const histograms = targets.filter((target) => /_seconds_bucket\b/.test(target.expr ?? ''));
      const withExemplars = targets.filter((target) => target.exemplar);
      for (const target of withExemplars) expect(histograms, panel.title).toContain(target);
      // The panels of the latency histograms that carry trace ids (packages/runtime/src/exemplars.ts).
      const traced =
        /(commit_to_publish|commit_to_consume|handler_duration|http_request_duration)_seconds_bucket/;
      if (panel.type === 'timeseries' && histograms.some((target) => traced.test(target.expr ?? ''))) {
        expect(withExemplars.length, panel.title).toBeGreaterThan(0);
      }
    }
  });
});

describe('the live charts (src/charts.ts)', () => {
  it('are the Order flow dashboard, panel for panel and query for query, as the web console draws them', () => {
    const flow = files.find(({ file }) => file === 'order-flow.json')?.dashboard;
    const panels = flow ? panelsOf(flow) : [];
    expect(panels.map((panel) => panel.title)).toEqual(liveCharts.map((chart) => chart.title));
    panels.forEach((panel, index) => {
      expect((panel.targets ?? []).map((target) => target.expr)).toEqual(
        liveCharts[index]?.queries.map((query) => query.expr),
      );
    });
  });
});

describe('provisioning', () => {
  it('has the datasources the dashboards refer to, and sends exemplar trace ids to Zipkin', () => {
    const provisioned = readFileSync(path.join(dir, '../provisioning/datasources/prometheus.yml'), 'utf8');
    expect(provisioned).toMatch(new RegExp(`uid: ${prometheus.uid}\\n\\s+type: ${prometheus.type}`));
    expect(provisioned).toMatch(new RegExp(`uid: ${zipkin.uid}\\n\\s+type: ${zipkin.type}`));
    expect(provisioned).toMatch(new RegExp(`- name: trace_id\\n\\s+datasourceUid: ${zipkin.uid}`));
  });
});
