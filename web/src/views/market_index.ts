// The market view's daily price index (GET /api/v1/market/index?gpu_model=&region=&currency=&from=&to=):
// for the chosen book's GPU model, region and currency, the volume-weighted price of each UTC day's
// trades (of every delivery window together) over the last N UTC days, as a line over every day of
// the period (a day without trades has no index and stays empty) with the GPU-hours traded as bars,
// and the days as a table of the API's exact figures. The method is said in words under it.

import { indexChart } from "../charts_market";
import { h, notice, num, table } from "../dom";
import { dateText, dayText, utcText } from "../dates";
import { t } from "../i18n";
import type { MarketIndex } from "../types_market";
import { errorNotice } from "./errors";

export const INDEX_DAYS = [30, 90, 365] as const; // the API takes at most 400 days
const OPEN_TABLE_DAYS = 14; // more index days than this fold behind their summary line

const DAY_MS = 86_400_000;

/** The UTC day "YYYY-MM-DD" of an instant. */
const isoDay = (at: string | number) => new Date(typeof at === "string" ? Date.parse(at) : at).toISOString().slice(0, 10);

/** Every UTC day "YYYY-MM-DD" of [from, to). */
function daysOf(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = Math.floor(Date.parse(from) / DAY_MS) * DAY_MS; d < Date.parse(to); d += DAY_MS) out.push(new Date(d).toISOString().slice(0, 10));
  return out;
}

export function indexSection(key: { gpu_model: string; region: string; currency: string }, days: number,
  answer: PromiseSettledResult<MarketIndex>): { el: HTMLElement; draw: () => void } {
  const title = h("h3", {}, t("market.index.title", { model: key.gpu_model, region: key.region, currency: key.currency }));
  if (answer.status === "rejected") return { el: h("section", { "data-testid": "market-index" }, title, errorNotice(answer.reason)), draw: () => {} };
  const index = answer.value;
  const chartEl = h("div", { class: "chart", "data-testid": "market-index-chart", style: "height:280px" });
  const rows = table("market-index-table",
    [t("market.index.col.day"), t("market.index.col.vwap"), t("market.col.gpu_hours"), t("market.index.col.trades"),
     t("market.index.col.low"), t("market.index.col.high")],
    [...index.days].reverse().map((d) => [
      dateText(d.day), num(d.vwap_per_gpu_hour), num(String(d.gpu_hours)), num(String(d.trades)), num(d.low_per_gpu_hour), num(d.high_per_gpu_hour),
    ]),
    [...index.days].reverse().map((d) => d.day));
  const el = h("section", { "data-testid": "market-index" },
    title,
    h("p", { class: "muted", title: `${utcText(index.from)} – ${utcText(index.to)}`, "data-testid": "market-index-period" },
      t("market.index.period", { from: dateText(isoDay(index.from)), to: dateText(isoDay(Date.parse(index.to) - DAY_MS)) })),
    ...(index.days.length === 0
      ? [notice("info", t("market.index.empty", { model: key.gpu_model, region: key.region, currency: key.currency, n: days }), "market-index-empty")]
      : [chartEl,
         index.days.length <= OPEN_TABLE_DAYS ? rows : h("details", {}, h("summary", {}, t("common.count", { n: index.days.length })), rows)]),
    h("p", { class: "muted description", "data-testid": "market-index-method" }, t("market.index.method")),
  );
  const draw = () => {
    if (index.days.length === 0) return;
    const byDay = new Map(index.days.map((d) => [d.day, d]));
    const all = daysOf(index.from, index.to);
    indexChart(chartEl, {
      days: all.map(dayText),
      vwap: all.map((d) => byDay.get(d)?.vwap_per_gpu_hour ?? null),
      volume: all.map((d) => byDay.get(d)?.gpu_hours ?? null),
      vwapName: t("market.index.series.vwap"),
      volumeName: t("market.index.series.volume"),
    });
  };
  return { el, draw };
}
