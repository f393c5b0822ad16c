// Bar charts with Apache ECharts (tree-shaken: bar series, SVG renderer). The bar lengths
// need numbers, but every label and tooltip shows the API's own decimal string. Every chart is
// made by newChart, so a view change disposes it; tooltips are HTML, so text goes in escaped.

import * as echarts from "echarts/core";
import { BarChart } from "echarts/charts";
import { GridComponent, LegendComponent, MarkLineComponent, TooltipComponent } from "echarts/components";
import { SVGRenderer } from "echarts/renderers";

echarts.use([BarChart, GridComponent, LegendComponent, MarkLineComponent, TooltipComponent, SVGRenderer]);

const live = new Set<echarts.ECharts>();

window.addEventListener("resize", () => {
  for (const chart of live) chart.resize();
});

/** A chart in `el`, disposed with the view; null when `el` left the page (a superseded view). */
export function newChart(el: HTMLElement): echarts.ECharts | null {
  if (!el.isConnected) return null;
  const chart = echarts.init(el, undefined, { renderer: "svg" });
  live.add(chart);
  return chart;
}

/** Text for an HTML tooltip: API strings (names, messages) must not become markup. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A round axis end a little above `line` (a threshold drawn where no bar reaches). */
export function niceAbove(line: number): number {
  const target = line * 1.15;
  const magnitude = 10 ** Math.floor(Math.log10(target));
  const nice = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((f) => f * magnitude >= target) ?? 10;
  return Number((nice * magnitude).toPrecision(12));
}

/** Disposes every chart: called when the view changes. */
export function disposeCharts(): void {
  for (const chart of live) chart.dispose();
  live.clear();
}

export interface Bar {
  label: string;
  value: string; // exact decimal string from the API
  color?: string;
}

/** A horizontal bar chart in `el`; `threshold` draws a dashed line (e.g. the score floor). */
export function barChart(el: HTMLElement, bars: Bar[], options: { max?: number; threshold?: string } = {}): void {
  const chart = newChart(el);
  if (!chart) return; // a superseded view: its page is gone
  const rows = [...bars].reverse(); // ECharts draws the first category at the bottom
  chart.setOption({
    animation: false,
    grid: { left: 8, right: 64, top: options.threshold ? 24 : 8, bottom: 8, containLabel: true },
    tooltip: {
      trigger: "item",
      formatter: (p: { dataIndex: number }) => escapeHtml(`${rows[p.dataIndex].label}: ${rows[p.dataIndex].value}`),
    },
    xAxis: { type: "value", max: options.max ?? thresholdMax(bars, options.threshold) },
    yAxis: { type: "category", data: rows.map((b) => b.label), axisLabel: { fontSize: 11 } },
    series: [
      {
        type: "bar",
        barMaxWidth: 22,
        data: rows.map((b) => ({ value: Number(b.value), itemStyle: b.color ? { color: b.color } : undefined })),
        label: {
          show: true,
          position: "right",
          formatter: (p: { dataIndex: number }) => rows[p.dataIndex].value,
        },
        markLine: options.threshold
          ? {
              silent: true, // no tooltip: the chart's formatter reads bars, and the line is none
              symbol: "none",
              lineStyle: { type: "dashed", color: "#b45309" },
              label: { formatter: options.threshold },
              data: [{ xAxis: Number(options.threshold) }],
            }
          : undefined,
      },
    ],
  });
}

function thresholdMax(bars: Bar[], threshold?: string): number | undefined {
  if (threshold === undefined || !(Number(threshold) > 0)) return undefined;
  return bars.every((b) => Number(b.value) < Number(threshold) * 1.05) ? niceAbove(Number(threshold)) : undefined;
}

export interface Series {
  name: string;
  values: string[]; // exact decimal strings from the API, one per category
  color: string;
}

/** Horizontal bars with several series side by side per category (e.g. true cost vs list price). */
export function groupedBarChart(el: HTMLElement, categories: string[], series: Series[]): void {
  const chart = newChart(el);
  if (!chart) return;
  const order = categories.map((_, i) => categories.length - 1 - i); // first category on top
  chart.setOption({
    animation: false,
    legend: { top: 0, data: series.map((s) => s.name) },
    grid: { left: 8, right: 72, top: 28, bottom: 8, containLabel: true },
    tooltip: {
      trigger: "item",
      formatter: (p: { seriesIndex: number; dataIndex: number }) =>
        escapeHtml(`${categories[order[p.dataIndex]]} — ${series[p.seriesIndex].name}: ${series[p.seriesIndex].values[order[p.dataIndex]]}`),
    },
    xAxis: { type: "value" },
    yAxis: { type: "category", data: order.map((i) => categories[i]), axisLabel: { fontSize: 11 } },
    series: series.map((s) => ({
      name: s.name,
      type: "bar",
      barMaxWidth: 18,
      itemStyle: { color: s.color },
      data: order.map((i) => Number(s.values[i])),
      label: { show: true, position: "right", formatter: (p: { dataIndex: number }) => s.values[order[p.dataIndex]] },
    })),
  });
}
