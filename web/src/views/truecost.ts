// "True cost": a workload form and a pick of offers of one currency (GET /api/v1/offers,
// labelled supplier/name with supplier ids mapped through GET /api/v1/suppliers), posted to
// POST /api/v1/advise/quotes. Shows the ranking by cost per useful GPU-hour beside the list
// price, whether the sticker misleads (the API's own sentence), and a chart of both.

import { getAll, post } from "../api";
import { groupedBarChart } from "../charts";
import type { ViewContext } from "../context";
import { h, notice, num, table } from "../dom";
import { renderMessage, t, type Key } from "../i18n";
import type { Offer, QuotesAdvice, QuoteWorkload, SupplierInfo } from "../types";
import { problemNotice } from "../forms";
import { errorNotice } from "./errors";

const FIELDS: { key: keyof QuoteWorkload; label: Key; min: number; max: number; default: number }[] = [
  { key: "launches_per_month", label: "truecost.launches", min: 1, max: 1000, default: 120 },
  { key: "gpus", label: "truecost.gpus", min: 1, max: 1024, default: 8 },
  { key: "run_minutes", label: "truecost.run_minutes", min: 1, max: 43200, default: 40 },
  { key: "idle_pct", label: "truecost.idle_pct", min: 0, max: 99, default: 25 },
  { key: "egress_gb", label: "truecost.egress_gb", min: 0, max: 1_000_000_000, default: 800 },
  { key: "storage_io_gb", label: "truecost.storage_io_gb", min: 0, max: 1_000_000_000, default: 3000 },
];
const MAX_OFFERS = 20; // the API compares at most 20 offers at once

export async function renderTrueCost(root: HTMLElement, _ctx: ViewContext): Promise<void> {
  let offers: Offer[];
  let suppliers: SupplierInfo[];
  try {
    [offers, suppliers] = await Promise.all([getAll<Offer>("offers"), getAll<SupplierInfo>("suppliers")]);
  } catch (e) {
    root.replaceChildren(errorNotice(e));
    return;
  }
  const supplierName = new Map<string, string>();
  for (const s of suppliers) {
    supplierName.set(s.id, s.name);
    supplierName.set(s.name, s.name);
  }
  const offerRef = (o: Offer) => `${supplierName.get(o.supplier) ?? o.supplier}/${o.name}`;
  const byCurrency = new Map<string, Offer[]>();
  for (const o of offers) {
    if (o.prices.on_demand === undefined) continue;
    byCurrency.set(o.currency, [...(byCurrency.get(o.currency) ?? []), o]);
  }
  const currencies = [...byCurrency.keys()].sort();
  // Default: the currency with the most offers to compare.
  const initial = [...currencies].sort((a, b) => byCurrency.get(b)!.length - byCurrency.get(a)!.length)[0];

  const inputs = new Map<keyof QuoteWorkload, HTMLInputElement>();
  const fieldLabels = FIELDS.map((f) => {
    const input = h("input", { type: "number", min: String(f.min), max: String(f.max), step: "1", value: String(f.default), required: true, "data-testid": `truecost-${f.key}` });
    inputs.set(f.key, input);
    return h("label", {}, t(f.label), input);
  });
  const currencySelect = h("select", { "data-testid": "truecost-currency", "aria-label": t("truecost.currency") },
    ...currencies.map((c) => h("option", { value: c, selected: c === initial }, c)));
  const picks = h("div", { class: "offer-picks", "data-testid": "truecost-offers", role: "group", "aria-label": t("truecost.offers") });
  const fillPicks = () => {
    const list = [...(byCurrency.get(currencySelect.value) ?? [])].sort((a, b) => offerRef(a).localeCompare(offerRef(b)));
    picks.replaceChildren(...list.map((o, i) =>
      h("label", {}, h("input", { type: "checkbox", value: offerRef(o), checked: i < MAX_OFFERS }), ` ${offerRef(o)} `,
        h("span", { class: "muted" }, `(${o.gpu_model}, ${o.prices.on_demand})`))));
  };
  currencySelect.addEventListener("change", fillPicks);
  fillPicks();

  const result = h("div", { "data-testid": "truecost-result" });
  const button = h("button", { type: "submit", "data-testid": "truecost-submit" }, t("truecost.compare"));
  const form = h("form", { "data-testid": "truecost-form" },
    h("div", { class: "form-grid" }, ...fieldLabels, h("label", {}, t("truecost.currency"), currencySelect), button),
    h("div", { class: "muted" }, t("truecost.offers")),
    picks);

  const compare = async () => {
    const workload = {} as QuoteWorkload;
    for (const f of FIELDS) {
      const text = inputs.get(f.key)!.value.trim();
      if (!/^[0-9]+$/.test(text)) {
        result.replaceChildren(notice("error", t("truecost.bad_number", { field: t(f.label) }), "view-error"));
        return;
      }
      workload[f.key] = Number(text);
    }
    const chosen = [...picks.querySelectorAll<HTMLInputElement>("input:checked")].map((x) => x.value);
    if (chosen.length === 0) {
      result.replaceChildren(notice("error", t("truecost.pick_offers"), "view-error"));
      return;
    }
    button.disabled = true;
    result.replaceChildren(h("p", { class: "muted" }, t("common.loading")));
    try {
      showAdvice(result, await post<QuotesAdvice>("advise/quotes", { workload, offers: chosen }));
    } catch (e) {
      result.replaceChildren(problemNotice(e, "view-error")); // every field the server refused
    } finally {
      button.disabled = false;
    }
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void compare();
  });

  root.replaceChildren(h("h2", {}, t("truecost.title")), h("p", { class: "muted" }, t("truecost.help")), form, result);
  if (initial) await compare(); // a first answer with the defaults
}

function showAdvice(root: HTMLElement, advice: QuotesAdvice): void {
  const chartEl = h("div", { class: "chart", "data-testid": "truecost-chart", style: `height:${70 + 44 * advice.ranking.length}px` });
  root.replaceChildren(
    h("p", { class: advice.sticker_misleads ? "notice error misleads" : "notice info misleads", "data-testid": "truecost-misleads" }, renderMessage(advice.misleads_message, advice.misleads)),
    h("h3", {}, t("truecost.ranking", { currency: advice.currency, hours: advice.workload.useful_gpu_hours })),
    table(
      "truecost-table",
      [t("truecost.col.rank"), t("truecost.col.offer"), t("truecost.col.gpu_model"), t("truecost.col.per_useful"), t("truecost.col.list_price"),
       t("truecost.col.list_rank"), t("truecost.col.plan"), t("truecost.col.total")],
      advice.ranking.map((r) => [
        num(String(r.rank)), h("strong", {}, r.offer), r.gpu_model, num(r.per_useful_gpu_hour), num(r.list_price),
        num(String(r.list_rank)), r.plan, num(r.total),
      ]),
      advice.ranking.map((r) => r.offer),
    ),
    h("section", {}, h("h3", {}, t("truecost.chart", { currency: advice.currency })), chartEl),
  );
  groupedBarChart(chartEl, advice.ranking.map((r) => r.offer), [
    { name: t("truecost.series.useful"), values: advice.ranking.map((r) => r.per_useful_gpu_hour), color: "#1d4ed8" },
    { name: t("truecost.series.list"), values: advice.ranking.map((r) => r.list_price), color: "#9ca3af" },
  ]);
}
