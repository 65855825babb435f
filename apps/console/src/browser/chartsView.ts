import uPlot from 'uplot';
import type { ChartsResponse, ChartView } from '../shared/apiTypes.ts';
import { byId, h } from './dom.ts';

// The live charts: one uPlot per chart of infra/grafana/src/charts.ts, created once and fed new
// data on every poll, so the lines move without the page flickering.

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

type Drawn = { plot: uPlot; labels: string; card: HTMLElement };
const drawn = new Map<string, Drawn>();

const formatters: Record<ChartView['unit'], (value: number) => string> = {
  ops: (value) => `${trim(value)}/s`,
  s: (value) => (value === 0 ? '0' : value < 1 ? `${trim(value * 1000)} ms` : `${trim(value)} s`),
  short: (value) => trim(value),
};

function trim(value: number): string {
  return Math.abs(value) >= 100 ? value.toFixed(0) : Number(value.toPrecision(3)).toString();
}

/** The alert's threshold as a dashed red line, when it is inside the chart's current scale. */
function thresholdLine(threshold: ChartView['threshold']): (plot: uPlot) => void {
  return (plot) => {
    if (!threshold) return;
    const [min, max] = [plot.scales.y?.min ?? 0, plot.scales.y?.max ?? 0];
    if (threshold.value < min || threshold.value > max) return;
    const y = Math.round(plot.valToPos(threshold.value, 'y', true));
    const { ctx, bbox } = plot;
    ctx.save();
    ctx.strokeStyle = '#b42318';
    ctx.setLineDash([6, 4]);
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(bbox.left, y);
    ctx.lineTo(bbox.left + bbox.width, y);
    ctx.stroke();
    ctx.restore();
  };
}

function createPlot(chart: ChartView, data: uPlot.AlignedData, container: HTMLElement): uPlot {
  const format = formatters[chart.unit];
  const options: uPlot.Options = {
    width: Math.max(280, container.clientWidth - 8),
    height: 170,
    // Labels only: the axes give the values (a live legend would read "–" until hovered).
    legend: { show: true, live: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [{}, { values: (_plot, ticks) => ticks.map(format), size: 60 }],
    series: [
      {},
      ...chart.series.map((series, index) => ({
        label: series.label,
        stroke: COLORS[index % COLORS.length] ?? '#333',
        width: 1.5,
        spanGaps: false,
        value: (_plot: uPlot, value: number | null) => (value === null ? '–' : format(value)),
      })),
    ],
    hooks: { draw: [thresholdLine(chart.threshold)] },
  };
  return new uPlot(options, data, container);
}

function card(chart: ChartView): HTMLElement {
  return h(
    'figure',
    { class: 'chart', 'data-chart': chart.id },
    h('figcaption', { title: `${chart.description}\n\n${chart.queries.join('\n')}` }, chart.title),
    h('div', { class: 'plot' }),
    h('div', { class: 'chart-note muted' }),
  );
}

/** Points with a value, over every series of a chart: what the tests read (data-points). */
function pointCount(chart: ChartView): number {
  return chart.series.reduce((sum, series) => sum + series.values.filter((v) => v !== null).length, 0);
}

export function renderCharts(response: ChartsResponse): void {
  const grid = byId('charts');
  for (const chart of response.charts) {
    let entry = drawn.get(chart.id);
    const labels = chart.series.map((series) => series.label).join('|');
    const data: uPlot.AlignedData = [response.times, ...chart.series.map((series) => series.values)];
    if (!entry) {
      const figure = card(chart);
      grid.append(figure);
      entry = { plot: undefined as unknown as uPlot, labels: '', card: figure };
      drawn.set(chart.id, entry);
    }
    const plotBox = entry.card.querySelector<HTMLElement>('.plot');
    if (!plotBox) continue;
    if (entry.labels !== labels || !entry.plot) {
      // New series (a relay appeared, a label changed): uPlot's series are fixed, so draw anew.
      entry.plot?.destroy();
      plotBox.replaceChildren();
      entry.plot = createPlot(chart, data, plotBox);
      entry.labels = labels;
    } else {
      entry.plot.setData(data);
    }
    const points = pointCount(chart);
    entry.card.dataset.points = String(points);
    entry.card.dataset.series = String(chart.series.length);
    const latest = chart.series.map((series) => series.values.findLast((v) => v !== null) ?? null);
    entry.card.dataset.latestMax = String(Math.max(0, ...latest.map((v) => v ?? 0)));
    entry.card.dataset.max = String(
      Math.max(0, ...chart.series.flatMap((series) => series.values.map((v) => v ?? 0))),
    );
    const note = entry.card.querySelector<HTMLElement>('.chart-note');
    if (note) {
      note.textContent = chart.error
        ? `Prometheus could not answer: ${chart.error}`
        : points === 0
          ? 'No data yet: place a few orders (a rate needs two scrapes).'
          : chart.threshold
            ? `dashed line: alert ${chart.threshold.alert} at ${formatters[chart.unit](chart.threshold.value)}`
            : '';
    }
  }
  byId('charts-window').textContent =
    `last ${Math.round((response.times.at(-1) ?? 0) - (response.times[0] ?? 0)) / 60} minutes, rates over ${response.rateWindow}`;
}
