// The market view's order ticket, cancel buttons and change controls (docs/market.md): POST
// /api/v1/market-orders with the shown book's fields, POST /api/v1/market-orders/{id}/cancel and
// …/replace. Shown to those who may
// trade (the market_orders row of the permission matrix, docs/security.md): a tenant's admins buy
// (and, in a book of whole nodes, resell nodes they hold), suppliers sell, operators place either
// for the tenant or supplier they pick; hidden once the window is over (the server refuses it
// then). The server validates; a refusal shows its sentence and each field it names. After a
// placement, change or cancel the view is read again with `placed=` or `cancelled=` in the hash,
// and says what became of the order from the order as stored (filled, resting, cancelled).

import { post } from "../api";
import type { ViewContext } from "../context";
import { h, notice } from "../dom";
import { intValue, labelled, numberInput, problemNotice, select, textInput } from "../forms";
import { labelOr, t } from "../i18n";
import type { BookKey, MarketOrder } from "../types_market";
import { bookOf, bookQuery, sideLabel, windowStatus } from "./market_book";

export interface Account {
  id: string;
  name: string;
}

/** Whether the account may place and cancel market orders at all (the server decides which). */
export function mayTrade(ctx: ViewContext): boolean {
  return ctx.scope.kind === "operator" || ctx.scope.kind === "supplier" || (ctx.scope.kind === "tenant" && ctx.scope.admin);
}

/** The sides this account may take in this book: a tenant's admin sells only whole nodes it holds (node books). */
function sides(ctx: ViewContext, book: BookKey): string[] {
  if (ctx.scope.kind === "supplier") return ["sell"];
  if (ctx.scope.kind === "tenant") return book.node_gpus ? ["buy", "sell"] : ["buy"];
  return ["buy", "sell"];
}

const TIFS = ["gtc", "ioc", "fok"] as const;

/** A key per ticket shown: a second click of the same submission answers the first order, places none. */
function newKey(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The ticket for `book`; `tenants` and `suppliers` are the accounts an operator may place for.
 * `extra` keeps the view's other hash fields.
 */
export function ticketSection(ctx: ViewContext, book: BookKey, suppliers: Account[], extra: Record<string, string>): HTMLElement | null {
  if (!mayTrade(ctx) || windowStatus(book) === "over") return null;
  const nodes = book.node_gpus ?? 0;
  const side = select("market-ticket-side", sides(ctx, book).map((s) => ({ value: s, label: sideLabel(s) })));
  const qty = numberInput("market-ticket-qty", 1, 100_000, nodes ? 1 : 8);
  const price = textInput("market-ticket-price", { placeholder: "2.10", inputmode: "decimal", size: "10" });
  const tif = select("market-ticket-tif", TIFS.map((x) => ({ value: x, label: t(`market.ticket.tif.${x}`) })), "gtc");
  const aon = h("input", { type: "checkbox", "data-testid": "market-ticket-aon" });
  const tenants = [...ctx.tenants.values()].sort((a, b) => a.name.localeCompare(b.name)).map((x) => ({ value: x.name, label: x.name }));
  const forTenant = select("market-ticket-tenant", tenants);
  const forSupplier = select("market-ticket-supplier", [...suppliers].sort((a, b) => a.name.localeCompare(b.name)).map((x) => ({ value: x.name, label: x.name })));
  const operator = ctx.scope.kind === "operator";
  const tenantField = labelled(t("market.ticket.for_tenant"), forTenant);
  const supplierField = labelled(t("market.ticket.for_supplier"), forSupplier);
  const showAccount = () => {
    tenantField.hidden = !operator || side.value !== "buy";
    supplierField.hidden = !operator || side.value !== "sell";
  };
  side.addEventListener("change", showAccount);
  showAccount();
  const status = h("div", { "data-testid": "market-ticket-status" });
  const submit = h("button", { type: "submit", "data-testid": "market-ticket-submit" }, t("market.ticket.place"));
  const key = newKey();
  const form = h("form", { class: "console-form", "data-testid": "market-ticket" },
    h("div", { class: "form-grid" },
      labelled(t("market.ticket.side"), side),
      tenantField, supplierField,
      labelled(nodes ? t("market.ticket.nodes", { gpus: nodes }) : t("market.ticket.gpus"), qty),
      labelled(t("market.ticket.price", { currency: book.currency }), price),
      labelled(t("market.ticket.tif"), tif),
      h("label", { class: "inline" }, aon, t("market.ticket.aon")),
      submit),
    h("p", { class: "muted" }, t(nodes ? "market.ticket.help_nodes" : "market.ticket.help", { hours: hoursOf(book) })),
    status);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const body: Record<string, unknown> = {
      ...bookOf(book), side: side.value, price_per_gpu_hour: price.value.trim(), time_in_force: tif.value,
      all_or_none: aon.checked, idempotency_key: key,
    };
    body[nodes ? "nodes" : "gpus"] = intValue(qty);
    if (operator) {
      if (side.value === "buy") body.tenant = forTenant.value;
      else body.supplier = forSupplier.value;
    }
    submit.disabled = true;
    status.replaceChildren(notice("info", t("market.ticket.sending"), "market-ticket-sending"));
    post<MarketOrder>("market-orders", body)
      .then((order) => ctx.navigate({ ...extra, ...bookQuery(book), placed: order.id }))
      .catch((e) => {
        submit.disabled = false;
        status.replaceChildren(problemNotice(e, "market-ticket-error"));
      });
  });
  return h("section", { class: "console", "data-testid": "market-ticket-section" }, h("h3", {}, t("market.ticket.title")), form);
}

const hoursOf = (b: BookKey) => Math.round((Date.parse(b.ends_at) - Date.parse(b.starts_at)) / 3_600_000);

/**
 * What became of the order the hash names, from the orders as stored: `placed=` (and `changed=`
 * for a change in place, `replaced=` with the order a new one replaced) or `cancelled=`.
 */
export function outcomeNotice(ctx: ViewContext, orders: MarketOrder[]): HTMLElement | null {
  const placed = ctx.query.get("placed");
  const cancelled = ctx.query.get("cancelled");
  const replaced = ctx.query.get("replaced");
  const id = placed ?? cancelled;
  if (!id) return null;
  const o = orders.find((x) => x.id === id);
  if (!o) return null;
  const args = { id: o.id, side: sideLabel(o.side), gpus: o.gpus, filled: o.filled_gpus, remaining: o.remaining_gpus, price: o.price_per_gpu_hour };
  let text: string;
  if (cancelled) text = t("market.ticket.outcome.cancelled_by_you", args);
  else if (ctx.query.get("changed") === o.id && o.state === "open") text = t("market.ticket.outcome.changed", args);
  else if (o.state === "filled") text = t("market.ticket.outcome.filled", args);
  else if (o.state === "open") text = t("market.ticket.outcome.resting", args);
  else {
    const tif = o.all_or_none && o.time_in_force === "ioc" ? "aon_ioc" : o.time_in_force;
    text = t("market.ticket.outcome.not_rested", { ...args, tif: labelOr(`market.ticket.tif.${tif}`, tif) });
  }
  if (replaced) text = `${t("market.ticket.outcome.replaced", { old: replaced })} ${text}`;
  return notice("info", text, "market-outcome");
}

/** The cancel button of an open order whose window is not over; null where there is none to offer. */
export function cancelButton(ctx: ViewContext, o: MarketOrder, status: HTMLElement, extra: Record<string, string>): HTMLElement | null {
  if (!mayTrade(ctx) || o.state !== "open" || windowStatus(o) === "over") return null;
  const b = h("button", { type: "button", "data-testid": `market-cancel-${o.id}` }, t("market.ticket.cancel"));
  b.addEventListener("click", () => {
    b.disabled = true;
    post<MarketOrder>(`market-orders/${encodeURIComponent(o.id)}/cancel`, {})
      .then(() => ctx.navigate({ ...extra, ...bookQuery(o), cancelled: o.id }))
      .catch((e) => {
        b.disabled = false;
        status.replaceChildren(problemNotice(e, "market-cancel-error"));
      });
  });
  return b;
}

/**
 * Changes an open order (POST …/replace): a new limit price and what is left of it. Less at the
 * same price keeps its place in the queue; a new price or more is a new order in its place.
 */
export function changeControl(ctx: ViewContext, o: MarketOrder, status: HTMLElement, extra: Record<string, string>): HTMLElement | null {
  if (!mayTrade(ctx) || o.state !== "open" || windowStatus(o) === "over") return null;
  const nodes = o.node_gpus ?? 0;
  const left = nodes ? o.remaining_gpus / nodes : o.remaining_gpus;
  const price = textInput(`market-change-price-${o.id}`, { value: o.price_per_gpu_hour, size: "7", inputmode: "decimal" });
  const qty = numberInput(`market-change-qty-${o.id}`, 1, 100_000, left);
  const apply = h("button", { type: "submit", "data-testid": `market-change-apply-${o.id}` }, t("market.ticket.apply"));
  const form = h("form", { class: "form-grid" },
    labelled(t("market.ticket.change_price"), price), labelled(t("market.ticket.change_qty"), qty), apply);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const body: Record<string, unknown> = {};
    if (price.value.trim() !== o.price_per_gpu_hour) body.price_per_gpu_hour = price.value.trim();
    const n = intValue(qty);
    if (n !== left) body[nodes ? "nodes" : "gpus"] = n;
    apply.disabled = true;
    post<MarketOrder>(`market-orders/${encodeURIComponent(o.id)}/replace`, body)
      .then((next) => ctx.navigate({ ...extra, ...bookQuery(o), placed: next.id, ...(next.id === o.id ? { changed: o.id } : { replaced: o.id }) }))
      .catch((e) => {
        apply.disabled = false;
        status.replaceChildren(problemNotice(e, "market-change-error"));
      });
  });
  return h("details", { class: "change", "data-testid": `market-change-${o.id}` }, h("summary", {}, t("market.ticket.change")), form);
}
