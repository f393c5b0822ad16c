// The dashboard's time charts with Apache ECharts: the utilization heatmap (hour × card) and
// series over categories (days or hours) drawn as bars, stacked bars or lines, with dashed
// threshold lines. As in charts.ts, lengths need numbers, but every tooltip shows the API's own
// strings (escaped: tooltips are HTML).

import * as echarts from "echarts/core";
import { HeatmapChart, LineChart } from "echarts/charts";
import { DataZoomComponent, VisualMapComponent } from "echarts/components";
import { escapeHtml, newChart, niceAbove } from "./charts";

echarts.use([HeatmapChart, LineChart, DataZoomComponent, VisualMapComponent]);

const VISIBLE_ROWS = 40; // more cards than this scroll with a slider
const PALETTE = ["#1d4ed8", "#15803d", "#b45309", "#7c3aed", "#0e7490", "#be123c", "#4d7c0f", "#9333ea", "#0369a1", "#a16207"];

/** The i-th series' colour, the same in every view (projects, cards, suppliers). */
export function seriesColor(i: number): string {
  return PALETTE[i % PALETTE.length];
}

export interface Heatmap {
  hours: string[]; // x labels
  cards: string[]; // y labels, top to bottom
  idle: boolean[]; // per card: label drawn with the idle marker
  cells: [card: number, hour: number, value: number, samples: number][];
  tooltip: (card: number, hour: number, value: number, samples: number) => string[]; // plain lines
}

/** Hour × card heatmap, 0–100 %, idle cards' labels in red with a ▼ marker. */
export function heatmapChart(el: HTMLElement, m: Heatmap): void {
  // SVG, as every chart here: a week of 400 cards draws in about a second, and unlike the canvas
  // renderer it paints in one pass, so nothing is left to paint after a view change disposes it.
  const chart = newChart(el);
  if (!chart) return;
  const scroll = m.cards.length > VISIBLE_ROWS;
  chart.setOption({
    animation: false,
    grid: { left: 8, right: scroll ? 48 : 16, top: 12, bottom: 64, containLabel: true },
    tooltip: {
      trigger: "item",
      className: "heat-tip",
      formatter: (p: { data: [number, number, number, number] }) => {
        const [hour, card, value, samples] = p.data;
        return m.tooltip(card, hour, value, samples).map(escapeHtml).join("<br/>");
      },
    },
    xAxis: { type: "category", data: m.hours, splitArea: { show: false }, axisLabel: { fontSize: 10 } },
    yAxis: {
      type: "category",
      data: m.cards,
      inverse: true, // the first card on top
      axisLabel: {
        fontSize: 10,
        formatter: (value: string, index: number) => (m.idle[index] ? `{idle|▼ ${value}}` : value),
        rich: { idle: { color: "#b91c1c", fontWeight: "bold", fontSize: 10 } },
      },
    },
    visualMap: {
      type: "continuous",
      dimension: 2, // the mean %, not the sample count after it
      min: 0,
      max: 100,
      calculable: false,
      orient: "horizontal",
      left: "center",
      bottom: 0,
      itemHeight: 160,
      text: ["100%", "0%"],
      inRange: { color: ["#fcd34d", "#bfdbfe", "#3b82f6", "#1e3a8a"] }, // amber at 0%: idle reads at a glance
    },
    dataZoom: [
      { type: "inside", xAxisIndex: 0 },
      ...(scroll
        ? [{ type: "slider", yAxisIndex: 0, right: 8, width: 16, startValue: 0, endValue: VISIBLE_ROWS - 1, zoomLock: true, showDetail: false },
           { type: "inside", yAxisIndex: 0, zoomOnMouseWheel: false, moveOnMouseWheel: true }]
        : []),
    ],
    series: [
      {
        type: "heatmap",
        data: m.cells.map(([card, hour, value, samples]) => [hour, card, value, samples]),
        emphasis: { itemStyle: { borderColor: "#111827", borderWidth: 1 } },
        progressive: 0, // drawn in one frame: a screenshot never catches it half done
        progressiveThreshold: Number.MAX_SAFE_INTEGER,
      },
    ],
  });
}

export interface Series {
  name: string;
  values: (string | null)[]; // the API's decimal strings, one per category; null = no point
  kind: "bar" | "line";
  stack?: string; // series with the same stack name pile up
  color?: string;
  dashed?: boolean;
  connectNulls?: boolean;
  unit?: string; // after each value in the tooltip ("USD", "%")
}

export interface Threshold {
  value: string;
  label: string;
  color?: string;
}

/**
 * The value axis' top when a threshold line sits above every value (markLine does not stretch
 * the axis): a round number a little above the line; otherwise ECharts picks its own.
 */
function axisMax(series: Series[], thresholds: Threshold[]): number | undefined {
  if (thresholds.length === 0) return undefined;
  const line = Math.max(...thresholds.map((t) => Number(t.value)));
  const stacks = new Map<string, number[]>();
  let top = 0;
  for (const s of series) {
    const values = s.values.map((v) => (v === null ? 0 : Number(v)));
    if (!s.stack) top = Math.max(top, ...values);
    else stacks.set(s.stack, values.map((v, i) => v + (stacks.get(s.stack!)?.[i] ?? 0)));
  }
  for (const sums of stacks.values()) top = Math.max(top, ...sums);
  if (top >= line * 1.05 || !(line > 0)) return undefined;
  return niceAbove(line);
}

/** Series over categories (days, hours) with optional dashed horizontal threshold lines. */
export function seriesChart(el: HTMLElement, categories: string[], series: Series[], thresholds: Threshold[] = []): void {
  const chart = newChart(el);
  if (!chart) return;
  chart.setOption({
    animation: false,
    legend: { type: "scroll", top: 0, data: series.map((s) => s.name) },
    grid: { left: 8, right: 24, top: 32, bottom: 8, containLabel: true },
    tooltip: {
      trigger: "axis",
      formatter: (params: { seriesIndex: number; dataIndex: number; marker: string }[]) => {
        if (params.length === 0) return "";
        const lines = [escapeHtml(categories[params[0].dataIndex])];
        for (const p of params) {
          const s = series[p.seriesIndex];
          const v = s.values[p.dataIndex];
          if (v !== null) lines.push(`${p.marker}${escapeHtml(`${s.name}: ${v}${s.unit ? ` ${s.unit}` : ""}`)}`);
        }
        return lines.join("<br/>");
      },
    },
    xAxis: { type: "category", data: categories, axisLabel: { fontSize: 11 } },
    yAxis: { type: "value", max: axisMax(series, thresholds) },
    series: [
      ...series.map((s) => ({
        name: s.name,
        type: s.kind,
        stack: s.stack,
        barMaxWidth: 28,
        showSymbol: s.kind === "line",
        symbolSize: 5,
        connectNulls: s.connectNulls ?? false,
        itemStyle: s.color ? { color: s.color } : undefined,
        lineStyle: s.dashed ? { type: "dashed" } : undefined,
        data: s.values.map((v) => (v === null ? null : Number(v))),
      })),
      // The thresholds ride on a series of their own (no data, no legend entry), so they show
      // with no series at all and stay when the legend hides one. Last: tooltip indices hold.
      ...(thresholds.length === 0 ? [] : [{
        name: "thresholds",
        type: "line",
        data: [],
        silent: true,
        markLine: {
          symbol: "none",
          silent: true,
          data: thresholds.map((t) => ({
            yAxis: Number(t.value),
            lineStyle: { type: "dashed", color: t.color ?? "#b45309" },
            label: { formatter: t.label, position: "insideEndTop", color: t.color ?? "#b45309" },
          })),
        },
      }]),
    ],
  });
}
