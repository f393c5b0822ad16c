// The charts of the "Costs" view (costs.ts), one function each, all fed the API's strings.

import { barChart } from "../charts";
import { seriesChart, seriesColor, type Series } from "../charts_dash";
import { dayText } from "../dates";
import { cardLabel } from "../format";
import { t } from "../i18n";
import type { Budget, TenantCosts } from "../types_dashboard";

export const TOP_CARDS = 8; // lines drawn in the per-card chart (the API sends the top 50)

const color = seriesColor;

/** Cost per project per day, stacked, with the tenant's total (commitments and credits included). */
export function projectChart(el: HTMLElement, days: string[], x: TenantCosts): void {
  const series: Series[] = x.projects.map((p, i) => ({ name: p.project, values: p.daily, kind: "bar", stack: "projects", color: color(i), unit: x.currency }));
  series.push({ name: t("costs.tenant_total"), values: x.daily_total, kind: "line", color: "#111827", unit: x.currency });
  seriesChart(el, days.map(dayText), series);
}

/**
 * Egress cost per project per day, side by side (not stacked: the threshold is each project's
 * own, a freeze of the project whose day's egress passes it), against the egress threshold.
 */
export function egressChart(el: HTMLElement, days: string[], x: TenantCosts): void {
  seriesChart(
    el,
    days.map(dayText),
    x.projects.map((p, i) => ({ name: p.project, values: p.egress_daily, kind: "bar", color: color(i), unit: x.currency })),
    [{ value: x.egress_threshold, label: `${x.egress_threshold} ${x.currency}`, color: "#b91c1c" }],
  );
}

/** The top cards' cost per day, one line each, against the card threshold. */
export function cardChart(el: HTMLElement, days: string[], x: TenantCosts): void {
  seriesChart(
    el,
    days.map(dayText),
    x.cards.slice(0, TOP_CARDS).map((c, i) => ({ name: cardLabel(c), values: c.daily, kind: "line", color: color(i), unit: x.currency })),
    [{ value: x.card_threshold, label: `${x.card_threshold} ${x.currency}` }],
  );
}

/** Storage I/O share of each project's cost in the period, against the threshold. */
export function storageShareChart(el: HTMLElement, x: TenantCosts): void {
  barChart(
    el,
    x.projects.map((p) => ({ label: p.project, value: p.storage_io_share_pct })),
    { threshold: String(x.storage_io_share_threshold_pct) },
  );
}

/**
 * A budget's burn-down over its month: cumulative spend per day so far, the monthly budget as
 * a line, and a dashed projection from the last day spent to the month-end estimate.
 */
export function budgetChart(el: HTMLElement, b: Budget, currency: string): void {
  const [year, month] = b.month.split("-").map(Number);
  const length = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const dates = Array.from({ length }, (_, i) => `${b.month}-${String(i + 1).padStart(2, "0")}`);
  const spent = new Map(b.burn.map((p) => [p.date, p.spent]));
  const last = b.burn[b.burn.length - 1];
  const projection = dates.map((d, i) => (last && d === last.date ? last.spent : i === length - 1 ? b.projected_month_end : null));
  seriesChart(
    el,
    dates.map(dayText),
    [
      { name: t("costs.budget.spent_series"), values: dates.map((d) => spent.get(d) ?? null), kind: "line", color: "#1d4ed8", unit: currency },
      { name: t("costs.budget.projection"), values: projection, kind: "line", color: b.projected_over ? "#b91c1c" : "#6b7280", dashed: true, connectNulls: true, unit: currency },
    ],
    [{ value: b.monthly, label: `${t("costs.budget.line")} ${b.monthly} ${currency}`, color: "#b91c1c" }],
  );
}

