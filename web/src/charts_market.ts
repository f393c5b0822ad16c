// The market view's charts with Apache ECharts: a book's depth (GPUs resting at each price or
// better, bids stepping down to the left of the spread and asks up to the right, the last trade
// as a dashed line) and the daily price index (the volume-weighted price as a line over every UTC
// day of the period, a day without trades left empty, the GPU-hours traded as bars). As in
// charts.ts, positions need numbers, but every label and tooltip shows the API's own strings.

import * as echarts from "echarts/core";
import { BarChart, LineChart, ScatterChart } from "echarts/charts";
import { escapeHtml, newChart } from "./charts";
import type { BookLevel } from "./types_market";

echarts.use([BarChart, LineChart, ScatterChart]);

const BID = "#15803d";
const ASK = "#be123c";
const LAST = "#b45309";

export interface DepthLabels {
  bids: string;
  asks: string;
  gpus: string; // the value axis' name
  last: (price: string) => string;
  tip: (side: "bid" | "ask", level: BookLevel, cumulative: number) => string;
}

/** The levels with their running total of GPUs, best first. */
function cumulate(levels: BookLevel[]): { level: BookLevel; cumulative: number }[] {
  let sum = 0;
  return levels.map((level) => ({ level, cumulative: (sum += level.gpus) }));
}

/** Depth of a book: `bids` and `asks` best first (as GET /market/depth lists them); `last` the last trade's price. */
export function depthChart(el: HTMLElement, bids: BookLevel[], asks: BookLevel[], labels: DepthLabels, last?: string): void {
  const chart = newChart(el);
  if (!chart) return;
  const prices = [...bids, ...asks].map((l) => Number(l.price_per_gpu_hour)).concat(last === undefined ? [] : [Number(last)]);
  const lo = Math.min(...prices);
  const hi = Math.max(...prices);
  const margin = Math.max((hi - lo) * 0.25, hi * 0.05);
  // A step line through the levels: flat at each level's total until the next (worse) price.
  const steps = (side: { level: BookLevel; cumulative: number }[], end: number) => {
    const points: [number, number][] = [];
    let total = 0;
    for (const { level, cumulative } of side) {
      const x = Number(level.price_per_gpu_hour);
      points.push([x, total], [x, cumulative]);
      total = cumulative;
    }
    if (side.length > 0) points.push([end, total]);
    return points;
  };
  const bidLevels = cumulate(bids);
  const askLevels = cumulate(asks);
  const area = (name: string, color: string, points: [number, number][]) => ({
    name, type: "line", data: points, silent: true, showSymbol: false, color,
    lineStyle: { color, width: 2 }, areaStyle: { color, opacity: 0.15 },
  });
  const dots = (name: string, color: string, side: "bid" | "ask", levels: { level: BookLevel; cumulative: number }[]) => ({
    name, type: "scatter", color, symbolSize: 7,
    data: levels.map(({ level, cumulative }) => [Number(level.price_per_gpu_hour), cumulative]),
    label: { show: true, position: "top", fontSize: 11, formatter: (p: { dataIndex: number }) => levels[p.dataIndex].level.price_per_gpu_hour },
    tooltip: { formatter: (p: { dataIndex: number }) => escapeHtml(labels.tip(side, levels[p.dataIndex].level, levels[p.dataIndex].cumulative)) },
  });
  chart.setOption({
    animation: false,
    legend: { top: 0, data: [labels.bids, labels.asks] },
    grid: { left: 8, right: 24, top: 36, bottom: 8, containLabel: true },
    tooltip: { trigger: "item" },
    xAxis: { type: "value", scale: true },
    yAxis: { type: "value", name: labels.gpus, minInterval: 1 },
    series: [
      area(labels.bids, BID, steps(bidLevels, Math.max(0, lo - margin))),
      area(labels.asks, ASK, steps(askLevels, hi + margin)),
      dots(labels.bids, BID, "bid", bidLevels),
      dots(labels.asks, ASK, "ask", askLevels),
      ...(last === undefined ? [] : [{
        name: "last", type: "line", data: [], silent: true,
        markLine: {
          symbol: "none", silent: true,
          lineStyle: { type: "dashed", color: LAST },
          label: { formatter: labels.last(last), position: "insideEndTop", color: LAST },
          data: [{ xAxis: Number(last) }],
        },
      }]),
    ],
  });
}

export interface IndexSeries {
  days: string[]; // x labels, one per UTC day of the period
  vwap: (string | null)[]; // the API's decimal string, or null: no trades that day
  volume: (number | null)[]; // GPU-hours traded
  vwapName: string;
  volumeName: string;
}

const LABELLED_POINTS = 15; // more index points than this: values in the tooltip only

/** The daily price index: VWAP per day (left axis) over the GPU-hours traded (bars, right axis). */
export function indexChart(el: HTMLElement, s: IndexSeries): void {
  const chart = newChart(el);
  if (!chart) return;
  const points = s.vwap.filter((v) => v !== null).length;
  chart.setOption({
    animation: false,
    legend: { top: 0, data: [s.vwapName, s.volumeName] },
    grid: { left: 8, right: 8, top: 36, bottom: 8, containLabel: true },
    tooltip: {
      trigger: "axis",
      formatter: (params: { seriesIndex: number; dataIndex: number; marker: string }[]) => {
        if (params.length === 0) return "";
        const i = params[0].dataIndex;
        const lines = [escapeHtml(s.days[i])];
        for (const p of params) {
          const v = p.seriesIndex === 0 ? s.vwap[i] : s.volume[i];
          if (v !== null) lines.push(`${p.marker}${escapeHtml(`${p.seriesIndex === 0 ? s.vwapName : s.volumeName}: ${v}`)}`);
        }
        return lines.join("<br/>");
      },
    },
    xAxis: { type: "category", data: s.days, axisLabel: { fontSize: 11 } },
    yAxis: [
      { type: "value", scale: true },
      { type: "value", minInterval: 1, splitLine: { show: false } },
    ],
    series: [
      {
        name: s.vwapName, type: "line", color: "#1d4ed8", showSymbol: true, symbolSize: 7, connectNulls: false,
        data: s.vwap.map((v) => (v === null ? null : Number(v))),
        label: { show: points <= LABELLED_POINTS, position: "top", fontSize: 11, formatter: (p: { dataIndex: number }) => s.vwap[p.dataIndex] ?? "" },
      },
      {
        name: s.volumeName, type: "bar", yAxisIndex: 1, color: "#cbd5e1", barMaxWidth: 18,
        data: s.volume.map((v) => v),
      },
    ],
  });
}
