// "Costs": GET /api/v1/dashboard/costs — per tenant and currency (operators: every tenant, or
// the one picked), rated like the day invoices: cost per project per day (stacked, beside the
// tenant's total with commitments and credits), per card per day for the top cards against the
// card threshold, each budgeted project's burn-down with its month-end projection, storage I/O
// share per project against its threshold, egress per day against the egress threshold, and
// the period's cost-firewall alerts. An active egress freeze is a badge at the top of the
// tenant, with Lift for operators and the tenant's admins. Charts: costs_charts.ts.

import { get } from "../api";
import { mayLiftAlerts, type ViewContext } from "../context";
import { cents, h, money, notice, num, periodNote, replace, stat, table } from "../dom";
import { dayText, monthText } from "../dates";
import { cardLabel, centsText, decimalSum } from "../format";
import { alertText } from "../alert_text";
import { labelOr, t } from "../i18n";
import type { CostAlert, Costs, TenantCosts } from "../types_dashboard";
import { budgetChart, cardChart, egressChart, projectChart, storageShareChart, TOP_CARDS } from "./costs_charts";
import { errorNotice } from "./errors";
import { liftButton } from "./lift";
import { period, periodDays, periodSelect, tenantSelect } from "./period";

const OPEN_ALERTS = 10; // alerts listed open; more fold behind their summary line

export async function renderCosts(root: HTMLElement, ctx: ViewContext): Promise<void> {
  const { from, to } = period(periodDays(ctx), "day");
  const tenant = ctx.query.get("tenant") ?? undefined;
  const controls = h("form", { class: "controls", "data-testid": "costs-filters" }, periodSelect(ctx, "day"));
  controls.addEventListener("submit", (ev) => ev.preventDefault());
  const tenants = tenantSelect(ctx);
  if (tenants) controls.append(tenants);
  const status = h("div", { "data-testid": "costs-status" });

  let costs: Costs;
  try {
    costs = await get<Costs>("dashboard/costs", { from, to, tenant });
  } catch (e) {
    root.replaceChildren(h("h2", {}, t("costs.title")), controls, errorNotice(e));
    return;
  }
  const blocks = costs.tenants.map((x) => tenantBlock(ctx, costs.days, x, status));
  replace(
    root,
    h("h2", {}, t("costs.title")),
    controls,
    periodNote((from, to) => t("costs.period", { from, to }), costs.from, costs.to, "costs-period"),
    status,
    costs.tenants.length === 0 ? notice("info", t("costs.empty"), "costs-empty") : null,
    ...blocks.map((b) => b.el),
  );
  for (const b of blocks) b.draw(); // charts need their boxes on the page
}

function tenantBlock(ctx: ViewContext, days: string[], x: TenantCosts, status: HTMLElement) {
  const key = `${x.tenant}-${x.currency}`;
  const cur = x.currency;
  const frozen = x.alerts.filter((a) => a.frozen && a.state === "active");
  const lift = (a: CostAlert) => liftButton(a.id, ctx.reload, (e) => status.replaceChildren(errorNotice(e)));
  const canLift = mayLiftAlerts(ctx);
  const budgeted = x.projects.filter((p) => p.budget !== null);
  const overCards = x.cards.filter((c) => c.over_threshold_days > 0);

  const boxes = {
    projects: chartBox(`costs-chart-projects-${key}`, t("costs.chart.projects", { currency: cur })),
    cards: chartBox(`costs-chart-cards-${key}`, t("costs.chart.cards", { n: Math.min(TOP_CARDS, x.cards.length), currency: cur, threshold: x.card_threshold })),
    storage: chartBox(`costs-chart-storage-${key}`, t("costs.chart.storage", { pct: x.storage_io_share_threshold_pct }), 60 + 34 * x.projects.length),
    egress: chartBox(`costs-chart-egress-${key}`, t("costs.chart.egress", { currency: cur, threshold: x.egress_threshold })),
  };
  const budgets = budgeted.map((p) => {
    const b = p.budget!;
    const box = chartBox(`costs-chart-budget-${key}-${p.project}`, t("costs.budget.chart", { project: p.project, month: monthText(b.month) }));
    box.section.append(h("p", { class: "budget-figures", "data-testid": `costs-budget-${key}-${p.project}` },
      t("costs.budget.spent"), " ", cents(b.spent, cur), " / ", money(b.monthly, cur), " · ",
      t("costs.budget.remaining"), " ", cents(b.remaining, cur, `budget-remaining-${key}-${p.project}`), " · ",
      t("costs.budget.projected"), " ", cents(b.projected_month_end, cur),
      b.projected_over ? h("span", { class: "badge over" }, t("costs.budget.over")) : h("span", { class: "badge ok" }, t("costs.budget.within"))));
    return { p, box };
  });

  const el = h(
    "section",
    { class: "tenant-costs", "data-testid": `costs-tenant-${key}` },
    h("h2", {}, `${x.tenant} · ${cur}`,
      ...frozen.map((a) => h("span", { class: "badge frozen", "data-testid": `costs-frozen-badge-${a.id}` }, `${t("alerts.egress_frozen")}: ${a.project}`))),
    ...frozen.map((a) => h("div", { class: "notice error frozen-notice", "data-testid": `costs-frozen-${a.id}` },
      alertText(a), " ", canLift ? lift(a) : h("span", { class: "muted" }, t("costs.ask_admin")))),
    h("div", { class: "cards" },
      stat(money(decimalSum(x.daily_total), cur), t("costs.total"), `costs-total-${key}`),
      stat(String(x.projects.length), t("costs.projects"), `costs-project-count-${key}`),
      stat(String(x.cards_over_threshold), t("costs.cards_over", { threshold: x.card_threshold, currency: cur }), `costs-cards-over-${key}`, x.cards_over_threshold > 0 ? "warn" : undefined),
      stat(String(x.alerts.filter((a) => a.state === "active").length), t("costs.active_alerts"), `costs-active-alerts-${key}`)),
    h("h3", {}, t("costs.daily_table", { currency: cur })),
    table(
      `costs-daily-${key}`,
      [t("costs.col.project"), ...days.map((d) => h("span", { title: `${d} UTC` }, dayText(d))), t("costs.col.total")],
      [
        ...x.projects.map((p) => [h("strong", {}, p.project), ...p.daily.map((v) => num(v)), h("strong", {}, num(p.total))]),
        [h("em", {}, t("costs.tenant_total")), ...x.daily_total.map((v) => num(v)), h("strong", {}, num(decimalSum(x.daily_total)))],
      ],
      [...x.projects.map((p) => p.project), "*total"],
    ),
    h("div", { class: "chart-grid" }, boxes.projects.section, boxes.egress.section),
    h("h3", {}, t("costs.projects_table", { currency: cur })),
    table(
      `costs-projects-${key}`,
      [t("costs.col.project"), t("costs.col.total"), t("costs.col.storage_io"), t("costs.col.share"), t("costs.col.egress"),
       t("costs.col.budget"), t("costs.col.remaining"), t("costs.col.projected")],
      x.projects.map((p) => {
        const over = p.storage_io_over_threshold;
        return [
          h("strong", {}, p.project), num(p.total), num(decimalSum(p.storage_io_daily)),
          h("span", {}, num(`${p.storage_io_share_pct}%`), over ? h("span", { class: "badge over" }, t("costs.over_threshold")) : null),
          num(decimalSum(p.egress_daily)),
          p.budget ? num(p.budget.monthly) : "—",
          p.budget ? num(centsText(p.budget.remaining), p.budget.remaining) : "—",
          p.budget ? h("span", {}, num(centsText(p.budget.projected_month_end), p.budget.projected_month_end), p.budget.projected_over ? h("span", { class: "badge over" }, t("costs.budget.over")) : null) : "—",
        ];
      }),
      x.projects.map((p) => p.project),
    ),
    h("div", { class: "chart-grid" }, boxes.cards.section, boxes.storage.section),
    x.cards_over_threshold === 0 ? null : h("section", {},
      h("h3", {}, t("costs.cards_table", { threshold: x.card_threshold, currency: cur })),
      table(`costs-cards-${key}`, [t("costs.col.card"), t("costs.col.max_daily"), t("costs.col.days_over"), t("costs.col.total")],
        overCards.map((c) => [h("strong", {}, cardLabel(c)), num(c.max_daily), num(String(c.over_threshold_days)), num(decimalSum(c.daily))]),
        overCards.map((c) => `${c.node_id}/${c.gpu}`)),
      // The API lists the costliest cards only; the count covers every card.
      x.cards_over_threshold > overCards.length
        ? h("p", { class: "muted", "data-testid": `costs-cards-unlisted-${key}` },
          t("costs.cards_unlisted", { n: x.cards_over_threshold - overCards.length, listed: x.cards.length }))
        : null),
    h("h3", {}, t("costs.budgets")),
    budgets.length === 0 ? h("p", { class: "muted" }, t("costs.no_budgets")) : h("div", { class: "chart-grid" }, ...budgets.map((b) => b.box.section)),
    x.alerts.length === 0
      ? h("p", { class: "muted", "data-testid": `costs-no-alerts-${key}` }, t("costs.no_alerts"))
      : h("details", { class: "alerts-list", open: x.alerts.length <= OPEN_ALERTS }, // a long list folds; freezes stay on top
        h("summary", {}, t("costs.alerts", { n: x.alerts.length })),
        table(
          `costs-alerts-${key}`,
          [t("alerts.col.kind"), t("costs.col.project"), t("alerts.col.state"), t("alerts.col.message"), ...(canLift ? [t("alerts.col.action")] : [])],
          x.alerts.map((a) => [
            h("span", {}, labelOr(`alerts.kind.${a.kind}`, a.kind),
              a.frozen ? h("span", { class: "badge frozen" }, t("alerts.egress_frozen")) : null),
            a.project || "—",
            h("span", { class: `badge alert-${a.state}` }, labelOr(`alerts.state.${a.state}`, a.state)),
            h("span", { class: "description" }, alertText(a)),
            ...(canLift ? [a.state === "active" ? lift(a) : "—"] : []),
          ]),
          x.alerts.map((a) => a.id),
        )),
  );

  const draw = () => {
    projectChart(boxes.projects.chart, days, x);
    egressChart(boxes.egress.chart, days, x);
    cardChart(boxes.cards.chart, days, x);
    storageShareChart(boxes.storage.chart, x);
    for (const b of budgets) budgetChart(b.box.chart, b.p.budget!, cur);
  };
  return { el, draw };
}

function chartBox(testid: string, title: string, height = 280) {
  const chart = h("div", { class: "chart", "data-testid": testid, style: `height:${height}px` });
  return { chart, section: h("section", {}, h("h3", {}, title), chart) };
}


