// The market view's "my orders" and "my trades": GET /api/v1/market-orders and /market-trades,
// which hold a tenant's buys, a supplier's sells, or — for operators — everyone's (then with the
// account of each order and both parties of each trade). Each row's book links to that book.

import type { ViewContext } from "../context";
import { h, money, notice, num, table, when } from "../dom";
import { labelOr, t } from "../i18n";
import type { BookKey, MarketOrder, MarketTrade } from "../types_market";
import { errorNotice } from "./errors";
import { bookQuery, sideLabel } from "./market_book";
import { cancelButton, changeControl, mayTrade } from "./market_ticket";

/** The book's model, region and currency as a link that shows it; `extra` keeps other hash fields (the index period). */
function bookLink(b: BookKey, extra: Record<string, string>): HTMLAnchorElement {
  const q = new URLSearchParams({ ...bookQuery(b), ...extra });
  return h("a", { class: "book-link", href: `#/market?${q.toString()}`, title: t("market.orders.open_book") }, `${b.gpu_model} · ${b.region} · ${b.currency}`);
}

const windowCell = (b: BookKey) => h("span", {}, when(b.starts_at), " – ", when(b.ends_at));

export function ordersSection(ctx: ViewContext, answer: PromiseSettledResult<MarketOrder[]>, extra: Record<string, string>): HTMLElement {
  const operator = ctx.scope.kind === "operator";
  const trader = mayTrade(ctx);
  const status = h("div", { "data-testid": "market-orders-status" });
  const title = h("h3", {}, t(operator ? "market.orders.all" : "market.orders.mine"));
  if (answer.status === "rejected") return h("section", { "data-testid": "market-orders-section" }, title, errorNotice(answer.reason));
  const orders = [...answer.value].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  title.append(" ", h("small", {}, t("common.count", { n: orders.length })));
  return h("section", { "data-testid": "market-orders-section" }, title, status,
    orders.length === 0
      ? notice("info", t("market.orders.empty"), "market-orders-empty")
      : table("market-orders",
          [t("market.orders.col.placed"), t("market.orders.col.book"), t("market.orders.col.window"), t("market.orders.col.side"),
           t("market.orders.col.state"), t("market.col.gpus"), t("market.orders.col.filled"), t("market.orders.col.price"),
           ...(operator ? [t("market.orders.col.account")] : []), ...(trader ? [t("market.orders.col.actions")] : [])],
          orders.map((o) => [
            when(o.created_at), bookLink(o, extra), windowCell(o),
            h("span", { class: `badge side-${o.side}` }, sideLabel(o.side)),
            h("span", { class: `badge market-${o.state}` }, labelOr(`market.state.${o.state}`, o.state)),
            num(String(o.gpus)), num(String(o.filled_gpus)), num(o.price_per_gpu_hour),
            ...(operator ? [o.tenant ?? o.supplier ?? "—"] : []),
            ...(trader ? [h("div", { class: "actions" }, cancelButton(ctx, o, status, extra), changeControl(ctx, o, status, extra))] : []),
          ]),
          orders.map((o) => o.id)));
}

export function tradesSection(ctx: ViewContext, answer: PromiseSettledResult<MarketTrade[]>, orders: MarketOrder[],
  extra: Record<string, string>): HTMLElement {
  const operator = ctx.scope.kind === "operator";
  const title = h("h3", {}, t(operator ? "market.trades.all" : "market.trades.mine"));
  if (answer.status === "rejected") return h("section", { "data-testid": "market-trades-section" }, title, errorNotice(answer.reason));
  const trades = [...answer.value].sort((a, b) => b.at.localeCompare(a.at) || b.id.localeCompare(a.id));
  title.append(" ", h("small", {}, t("common.count", { n: trades.length })));
  // Operators see every order, so a trade's seller is its sell order's supplier.
  const seller = new Map(orders.map((o) => [o.id, o.supplier]));
  return h("section", { "data-testid": "market-trades-section" }, title,
    trades.length === 0
      ? notice("info", t("market.trades.empty"), "market-trades-empty")
      : table("market-trades",
          [t("market.col.time"), t("market.orders.col.book"), t("market.orders.col.window"), t("market.col.price"), t("market.col.gpus"),
           t("market.col.gpu_hours"), t("market.trades.col.amount"), t("market.col.taker"), t("market.trades.col.settlement"),
           ...(operator ? [t("market.trades.col.buyer"), t("market.trades.col.seller")] : [])],
          trades.map((x) => [
            when(x.at), bookLink(x, extra), windowCell(x), num(x.price_per_gpu_hour), num(String(x.gpus)), num(String(x.gpu_hours)),
            money(x.amount, x.currency), sideLabel(x.taker_side),
            h("span", { class: `badge settlement-${x.state}` }, labelOr(`market.settlement.${x.state}`, x.state)),
            ...(operator ? [ctx.tenants.get(x.tenant_id)?.name ?? x.tenant_id, seller.get(x.sell_order) ?? x.supplier_id] : []),
          ]),
          trades.map((x) => x.id)),
    trades.length === 0 ? null : h("p", { class: "muted" }, t("market.trades.note")));
}
