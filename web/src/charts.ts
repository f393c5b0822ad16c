// Bar charts with Apache ECharts (tree-shaken: bar series, SVG renderer). The bar lengths
// need numbers, but every label and tooltip shows the API's own decimal string.

import * as echarts from "echarts/core";
import { BarChart } from "echarts/charts";
import { GridComponent, LegendComponent, MarkLineComponent, TooltipComponent } from "echarts/components";
import { SVGRenderer } from "echarts/renderers";

echarts.use([BarChart, GridComponent, LegendComponent, MarkLineComponent, TooltipComponent, SVGRenderer]);

const live = new Set<echarts.ECharts>();

window.addEventListener("resize", () => {
  for (const chart of live) chart.resize();
});

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
  if (!el.isConnected) return; // a superseded view: its page is gone
  const chart = echarts.init(el, undefined, { renderer: "svg" });
  live.add(chart);
  const rows = [...bars].reverse(); // ECharts draws the first category at the bottom
  chart.setOption({
    animation: false,
    grid: { left: 8, right: 64, top: options.threshold ? 24 : 8, bottom: 8, containLabel: true },
    tooltip: {
      trigger: "item",
      formatter: (p: { dataIndex: number }) => `${rows[p.dataIndex].label}: ${rows[p.dataIndex].value}`,
    },
    xAxis: { type: "value", max: options.max },
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

export interface Series {
  name: string;
  values: string[]; // exact decimal strings from the API, one per category
  color: string;
}

/** Horizontal bars with several series side by side per category (e.g. true cost vs list price). */
export function groupedBarChart(el: HTMLElement, categories: string[], series: Series[]): void {
  if (!el.isConnected) return;
  const chart = echarts.init(el, undefined, { renderer: "svg" });
  live.add(chart);
  const order = categories.map((_, i) => categories.length - 1 - i); // first category on top
  chart.setOption({
    animation: false,
    legend: { top: 0, data: series.map((s) => s.name) },
    grid: { left: 8, right: 72, top: 28, bottom: 8, containLabel: true },
    tooltip: {
      trigger: "item",
      formatter: (p: { seriesIndex: number; dataIndex: number }) =>
        `${categories[order[p.dataIndex]]} — ${series[p.seriesIndex].name}: ${series[p.seriesIndex].values[order[p.dataIndex]]}`,
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
