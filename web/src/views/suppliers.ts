// "Suppliers": POST /api/v1/advise/suppliers with {} (the platform's own suppliers and
// measured history) — scores as a bar chart with the qualifying floor, what blocks each
// supplier, the procurement split, and every checklist/history item with its evidence; then
// their health over the chosen period (GET /api/v1/dashboard/suppliers, supplier_health.ts).
// Either part shows its own error when the account may not read it.

import { get, post } from "../api";
import { barChart } from "../charts";
import type { ViewContext } from "../context";
import { h, num, periodNote, table } from "../dom";
import { localText, renderMessage, t, type Key } from "../i18n";
import type { SupplierAdvice, SuppliersAdvice } from "../types";
import type { SuppliersHealth } from "../types_dashboard";
import { errorNotice } from "./errors";
import { period, periodDays, periodSelect } from "./period";
import { healthSection } from "./supplier_health";

export async function renderSuppliers(root: HTMLElement, ctx: ViewContext): Promise<void> {
  const { from, to } = period(periodDays(ctx), "day");
  const [adviceAnswer, healthAnswer] = await Promise.allSettled([
    post<SuppliersAdvice>("advise/suppliers", {}),
    get<SuppliersHealth>("dashboard/suppliers", { from, to }),
  ]);
  const controls = h("form", { class: "controls", "data-testid": "suppliers-filters" }, periodSelect(ctx, "day"));
  controls.addEventListener("submit", (ev) => ev.preventDefault());
  const health = healthAnswer.status === "fulfilled" ? healthSection(healthAnswer.value) : null;
  const healthPart = health ? health.el : h("section", { "data-testid": "suppliers-health" }, h("h3", {}, t("health.title")), errorNotice(healthAnswer.status === "rejected" ? healthAnswer.reason : null));
  if (adviceAnswer.status === "rejected") {
    root.replaceChildren(h("h2", {}, t("nav.suppliers")), errorNotice(adviceAnswer.reason), controls, healthPart);
    health?.draw();
    return;
  }
  const advice = adviceAnswer.value;
  const label = (s: SupplierAdvice) => (s.display_name ? `${s.display_name} (${s.name})` : s.name);
  const itemText = (s: SupplierAdvice, id: string) => {
    const item = s.items.find((i) => i.id === id);
    return item ? localText(item) : id;
  };
  const yesNo = (b: boolean) => t(b ? "suppliers.yes" : "suppliers.no");
  const chartEl = h("div", { class: "chart", "data-testid": "suppliers-chart", style: `height:${60 + 36 * advice.suppliers.length}px` });

  root.replaceChildren(
    h("h2", {}, t("nav.suppliers")),
    periodNote((from, to) => t("suppliers.history", { from, to }), advice.history_period.from, advice.history_period.to, "suppliers-history"),
    h("section", {}, h("h3", {}, t("suppliers.chart")), chartEl),
    table(
      "suppliers-table",
      [t("suppliers.col.name"), t("suppliers.col.score"), t("suppliers.col.blocked"), t("suppliers.col.eligible"), t("suppliers.col.share")],
      advice.suppliers.map((s) => [
        h("strong", {}, label(s)), num(s.score),
        s.hard_failures.length === 0 ? "—" : h("ul", { class: "blocked" }, ...s.hard_failures.map((id) => h("li", {}, itemText(s, id)))),
        yesNo(s.eligible), num(s.share_pct),
      ]),
      advice.suppliers.map((s) => s.name),
    ),
    h("section", { "data-testid": "suppliers-split" },
      h("h3", {}, t("suppliers.split")),
      h("p", {}, localText(advice.split)),
      h("p", { class: "muted" }, t("suppliers.floor", { floor: advice.split.floor, cap: advice.split.effective_cap_pct }))),
    ...advice.suppliers.map((s) =>
      h("details", { "data-testid": `supplier-items-${s.name}` },
        h("summary", {}, t("suppliers.items", { name: label(s) })),
        table(
          `supplier-items-table-${s.name}`,
          [t("suppliers.col.item"), t("suppliers.col.weight"), t("suppliers.col.status"), t("suppliers.col.credit"), t("suppliers.col.evidence")],
          s.items.map((i) => [
            h("span", {}, localText(i), i.must_have ? h("span", { class: "badge must" }, t("suppliers.must_have")) : null),
            num(String(i.weight)),
            h("span", { class: `badge status-${i.status}` }, statusLabel(i.status)),
            num(String(i.credit_permille)),
            renderMessage(i.evidence_message, i.evidence),
          ]),
        ))),
    controls,
    healthPart,
  );
  health?.draw();
  barChart(chartEl, advice.suppliers.map((s) => ({
    label: s.name,
    value: s.score,
    color: s.blocked ? "#9ca3af" : s.eligible ? "#15803d" : "#2563eb",
  })), { max: 100, threshold: advice.split.floor });
}

function statusLabel(status: string): string {
  const key = `suppliers.status.${status}`;
  return ["pass", "fail", "partial", "unknown"].includes(status) ? t(key as Key) : status;
}
