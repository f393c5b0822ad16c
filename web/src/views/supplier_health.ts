// The health part of the "Suppliers" view: GET /api/v1/dashboard/suppliers — per supplier the
// failure rate (failed GPUs per 730-hour month), mean restore and response minutes, FP16 and NCCL
// attainment of the promise, availability, the advisor's score and suggested split, and charts
// of incidents and outage minutes per day. Rates are shown by integer arithmetic (format.ts).

import { seriesChart, seriesColor } from "../charts_dash";
import { h, num, periodNote, table } from "../dom";
import { dayText } from "../dates";
import { bpText, intText, permilleText } from "../format";
import { t } from "../i18n";
import type { SuppliersHealth } from "../types_dashboard";


export function healthSection(health: SuppliersHealth): { el: HTMLElement; draw: () => void } {
  const list = health.suppliers;
  const dates = [...new Set(list.flatMap((s) => s.daily.map((d) => d.date)))].sort();
  const perDay = (pickValue: (d: { incidents: number; outage_minutes: number }) => number) =>
    list.map((s, i) => {
      const byDate = new Map(s.daily.map((d) => [d.date, pickValue(d)]));
      return { name: s.supplier, color: seriesColor(i), values: dates.map((d) => String(byDate.get(d) ?? 0)) };
    });
  const incidentsEl = h("div", { class: "chart", "data-testid": "suppliers-incidents-chart", style: "height:260px" });
  const outageEl = h("div", { class: "chart", "data-testid": "suppliers-outage-chart", style: "height:260px" });

  const el = h(
    "section",
    { "data-testid": "suppliers-health" },
    h("h3", {}, t("health.title")),
    periodNote((from, to) => t("health.period", { from, to }), health.from, health.to, "health-period"),
    list.length === 0
      ? h("p", { class: "muted" }, t("health.empty"))
      : table(
          "suppliers-health-table",
          [t("suppliers.col.name"), t("health.col.nodes"), t("health.col.gpus"), t("health.col.node_hours"), t("health.col.incidents"),
           t("health.col.failure_rate"), t("health.col.restore"), t("health.col.response"), t("health.col.fp16"), t("health.col.nccl"),
           t("health.col.availability"), t("suppliers.col.score"), t("suppliers.col.share")],
          list.map((s) => [
            h("span", {}, h("strong", {}, s.supplier), s.blocked ? h("span", { class: "badge must" }, t("health.blocked")) : null),
            num(String(s.nodes)), num(String(s.gpus)), num(s.node_hours), num(String(s.incidents)),
            num(bpText(s.failure_rate_bp), s.failure_rate_bp === null ? undefined : `${s.failure_rate_bp} bp`),
            num(intText(s.restore_minutes)), num(intText(s.response_minutes)),
            num(permilleText(s.fp16_attainment_permille)), num(permilleText(s.nccl_attainment_permille)),
            num(s.availability_pct === null ? "—" : `${s.availability_pct}%`), num(s.score ?? "—"), num(s.share_pct ?? "—"),
          ]),
          list.map((s) => s.supplier),
        ),
    h("p", { class: "muted description" }, t("health.legend")),
    list.length === 0 ? null : h("div", { class: "chart-grid" },
      h("section", {}, h("h3", {}, t("health.incidents_chart")), incidentsEl),
      h("section", {}, h("h3", {}, t("health.outage_chart")), outageEl)),
  );
  const draw = () => {
    if (list.length === 0) return;
    const days = dates.map(dayText);
    seriesChart(incidentsEl, days, perDay((d) => d.incidents).map((s) => ({ ...s, kind: "bar", stack: "incidents" })));
    seriesChart(outageEl, days, perDay((d) => d.outage_minutes).map((s) => ({ ...s, kind: "line", unit: t("health.minutes") })));
  };
  return { el, draw };
}
