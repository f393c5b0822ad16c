// "Utilization": GET /api/v1/dashboard/utilization — mean GPU utilization per card and UTC hour
// as a heatmap, filtered by supplier, node, project (and tenant, for operators), with idle cards
// (mean below the API's idle threshold over the period) marked on the axis and listed. Filter
// choices come from GET /suppliers, /nodes and /projects (a supplier account has no projects).

import { get, getAll } from "../api";
import { heatmapChart } from "../charts_dash";
import type { ViewContext } from "../context";
import { h, notice, num, periodNote, stat, table } from "../dom";
import { hourText, utcText } from "../dates";
import { cardLabel } from "../format";
import { t } from "../i18n";
import type { SupplierInfo } from "../types";
import type { NodeRef, Project, Utilization, UtilizationCard } from "../types_dashboard";
import { errorNotice } from "./errors";
import { filterSelect, period, periodDays, periodSelect, projectSelect, tenantSelect } from "./period";

const OPEN_IDLE_LIST = 20; // idle cards listed open; more fold behind their summary line

export async function renderUtilization(root: HTMLElement, ctx: ViewContext): Promise<void> {
  const { from, to } = period(periodDays(ctx), "hour");
  const filter = (name: string) => ctx.query.get(name) ?? undefined;
  const [answer, suppliers, nodes, projects] = await Promise.allSettled([
    get<Utilization>("dashboard/utilization", {
      from, to, supplier: filter("supplier"), node: filter("node"), project: filter("project"),
      tenant: ctx.scope.kind === "operator" ? filter("tenant") : undefined,
    }),
    getAll<SupplierInfo>("suppliers"),
    getAll<NodeRef>("nodes"),
    ctx.scope.kind === "supplier" ? Promise.resolve([] as Project[]) : getAll<Project>("projects"),
  ]);

  const controls = h("form", { class: "controls", "data-testid": "util-filters" }, periodSelect(ctx, "hour"));
  controls.addEventListener("submit", (ev) => ev.preventDefault());
  const chosenSupplier = filter("supplier");
  if (suppliers.status === "fulfilled")
    controls.append(filterSelect(ctx, "supplier", t("filter.supplier"), byName(suppliers.value).map((s) => ({ value: s.id, label: s.name })), t("filter.all")));
  if (nodes.status === "fulfilled")
    controls.append(filterSelect(ctx, "node", t("filter.node"),
      byName(nodes.value.filter((n) => !chosenSupplier || n.supplier_id === chosenSupplier)).map((n) => ({ value: n.id, label: n.name })), t("filter.all")));
  const tenants = tenantSelect(ctx);
  if (tenants) controls.append(tenants);
  if (projects.status === "fulfilled" && ctx.scope.kind !== "supplier") controls.append(projectSelect(ctx, projects.value));

  if (answer.status === "rejected") {
    root.replaceChildren(h("h2", {}, t("util.title")), controls, errorNotice(answer.reason));
    return;
  }
  const u = answer.value;
  const idle = u.cards.filter((c) => c.idle);
  const summary = h(
    "div",
    { class: "cards", "data-testid": "util-summary" },
    stat(String(u.cards.length), t("util.cards"), "util-card-count"),
    stat(String(idle.length), t("util.idle_cards", { pct: u.idle_threshold_pct }), "util-idle-count", idle.length > 0 ? "warn" : undefined),
    stat(String(u.hours.length), t("util.hours"), "util-hour-count"),
  );
  const chartEl = h("div", { class: "chart", "data-testid": "util-heatmap", style: `height:${110 + 18 * Math.min(u.cards.length, 40)}px` });
  const cardRows = (list: UtilizationCard[], testid: string) =>
    table(
      testid,
      [t("util.col.card"), t("util.col.supplier"), t("util.col.model"), t("util.col.projects"), t("util.col.mean"), t("util.col.samples")],
      list.map((c) => [
        h("span", {}, h("strong", {}, cardLabel(c)), c.idle ? h("span", { class: "badge idle" }, t("util.idle")) : null),
        c.supplier, c.gpu_model, c.projects.join(", ") || "—", num(`${c.mean_pct}%`), num(String(c.samples)),
      ]),
      list.map((c) => `${c.node_id}/${c.gpu}`),
    );

  root.replaceChildren(
    h("h2", {}, t("util.title")),
    controls,
    periodNote((from, to) => t("util.period", { from, to }), u.from, u.to, "util-period"),
    summary,
    ...(u.cards.length === 0
      ? [notice("info", t("util.empty"), "util-empty")]
      : [
          h("section", {}, h("h3", {}, t("util.heatmap")), chartEl),
          idle.length === 0
            ? h("p", { class: "muted", "data-testid": "util-idle" }, t("util.no_idle"))
            : h("details", { "data-testid": "util-idle", open: idle.length <= OPEN_IDLE_LIST }, // a long list folds
                h("summary", {}, t("util.idle_title", { pct: u.idle_threshold_pct, n: idle.length })),
                cardRows(idle, "util-idle-table")),
          h("details", { "data-testid": "util-all" }, h("summary", {}, t("util.all_cards", { n: u.cards.length })), cardRows(u.cards, "util-cards")),
        ]),
  );
  if (u.cards.length > 0)
    heatmapChart(chartEl, {
      hours: u.hours.map(hourText),
      cards: u.cards.map(cardLabel),
      idle: u.cards.map((c) => c.idle),
      cells: u.cells,
      tooltip: (card, hour, value, samples) => [
        cardLabel(u.cards[card]),
        t("util.tip.hour_local", { hour: hourText(u.hours[hour]), utc: utcText(u.hours[hour]) }),
        t("util.tip.mean", { pct: value }),
        t("util.tip.samples", { n: samples }),
      ],
    });
}

function byName<T extends { name: string }>(list: T[]): T[] {
  return [...list].sort((a, b) => a.name.localeCompare(b.name));
}
