// "Offers": GET /api/v1/offers as a table, and a bar chart of the on-demand price per
// GPU-hour per offer — one chart per currency, since USD and CNY bars cannot share an axis.

import { getAll } from "../api";
import { barChart } from "../charts";
import type { ViewContext } from "../context";
import { h, num, table } from "../dom";
import { t } from "../i18n";
import type { Offer } from "../types";
import { errorNotice } from "./errors";

const PRICE_KEYS = ["on_demand", "spot", "reserved_1m", "reserved_12m", "reserved_36m"] as const;

export async function renderOffers(root: HTMLElement, _ctx: ViewContext): Promise<void> {
  let offers: Offer[];
  try {
    offers = await getAll<Offer>("offers");
  } catch (e) {
    root.replaceChildren(errorNotice(e));
    return;
  }
  const currencies = [...new Set(offers.map((o) => o.currency))].sort();
  const charts = currencies.map((currency) => {
    const priced = offers.filter((o) => o.currency === currency && o.prices.on_demand !== undefined);
    const el = h("div", { class: "chart", "data-testid": `offers-chart-${currency}`, style: `height:${60 + 30 * priced.length}px` });
    return { currency, priced, box: h("section", {}, h("h3", {}, t("offers.chart", { currency })), el), el };
  });
  const priceCell = (o: Offer, key: (typeof PRICE_KEYS)[number]) => (o.prices[key] === undefined ? "—" : num(o.prices[key]!));
  root.replaceChildren(
    h("h2", {}, t("nav.offers"), " ", h("small", {}, t("common.count", { n: offers.length }))),
    table(
      "offers-table",
      [t("offers.col.name"), t("offers.col.supplier"), t("offers.col.region"), t("offers.col.gpu_model"), t("offers.col.currency"),
       t("offers.col.on_demand"), t("offers.col.spot"), t("offers.col.reserved_1m"), t("offers.col.reserved_12m"), t("offers.col.reserved_36m"),
       t("offers.col.min_increment")],
      offers.map((o) => [
        h("strong", {}, o.name), o.supplier, o.region, o.gpu_model, o.currency,
        ...PRICE_KEYS.map((k) => priceCell(o, k)),
        o.min_increment_seconds === undefined ? "—" : num(String(o.min_increment_seconds)),
      ]),
      offers.map((o) => o.name),
    ),
    h("div", { class: "chart-grid" }, ...charts.map((c) => c.box)),
  );
  for (const c of charts) barChart(c.el, c.priced.map((o) => ({ label: o.name, value: o.prices.on_demand! })));
}
