// One book of the market view: what names it (BookKey ⇄ the location hash, a label, whether its
// delivery window is upcoming, in delivery or over), and its public data — the quote as figures
// (best bid, best ask, spread, last trade), the depth as a two-sided price ladder beside a depth
// chart, and its recent trades (GET /api/v1/market/{quote,depth,prints}). No identities: the API
// gives none. Prices are the API's strings; the spread is their exact difference (format.ts).

import { depthChart } from "../charts_market";
import { h, notice, num, periodNote, stat, table, when } from "../dom";
import { instantText } from "../dates";
import { decimalSum } from "../format";
import { problemNotice } from "../forms";
import { labelOr, t } from "../i18n";
import type { BookKey, BookLevel, MarketDepth, MarketPrints, MarketQuote } from "../types_market";

export const BOOK_PARAMS = ["gpu_model", "region", "starts_at", "ends_at", "currency"] as const;

/** The book the location hash names, when it names all five fields (and node_gpus for a node book). */
export function bookFromQuery(q: URLSearchParams): BookKey | null {
  const v = BOOK_PARAMS.map((k) => q.get(k) ?? "");
  if (v.some((x) => x === "")) return null;
  const book: BookKey = { gpu_model: v[0], region: v[1], starts_at: v[2], ends_at: v[3], currency: v[4] };
  const size = Number(q.get("node_gpus"));
  if (Number.isInteger(size) && size > 0) book.node_gpus = size;
  return book;
}

/** Just the fields that name the book of an order, a trade or an answer. */
export function bookOf(b: BookKey): BookKey {
  const book: BookKey = { gpu_model: b.gpu_model, region: b.region, starts_at: b.starts_at, ends_at: b.ends_at, currency: b.currency };
  if (b.node_gpus) book.node_gpus = b.node_gpus;
  return book;
}

/** The query (and hash) fields of a book. */
export function bookQuery(b: BookKey): Record<string, string> {
  const { node_gpus, ...rest } = bookOf(b);
  return node_gpus ? { ...rest, node_gpus: String(node_gpus) } : rest;
}

const iso = (at: string) => (Number.isNaN(Date.parse(at)) ? at : new Date(at).toISOString());

/** One string per book: the same book however its instants are written ("…00Z", "…00.000Z"). */
export function bookId(b: BookKey): string {
  return [b.gpu_model, b.region, iso(b.starts_at), iso(b.ends_at), b.currency, b.node_gpus ?? 0].join("|");
}

/** "h100-sxm5-80gb · us-east-1 · Dec 5, 2026, 08:00 – Dec 6, 2026, 08:00 · USD" (times as the view writes them). */
export function bookLabel(b: BookKey): string {
  const nodes = b.node_gpus ? ` · ${t("market.book.nodes_of", { gpus: b.node_gpus })}` : "";
  return `${b.gpu_model}${nodes} · ${b.region} · ${instantText(b.starts_at)} – ${instantText(b.ends_at)} · ${b.currency}`;
}

export type WindowStatus = "upcoming" | "delivering" | "over";

export function windowStatus(b: BookKey, now = Date.now()): WindowStatus {
  if (now < Date.parse(b.starts_at)) return "upcoming";
  return now < Date.parse(b.ends_at) ? "delivering" : "over";
}

export function sideLabel(side: string): string {
  return labelOr(`market.side.${side}`, side);
}

export interface BookAnswers {
  quote: PromiseSettledResult<MarketQuote>;
  depth: PromiseSettledResult<MarketDepth>;
  prints: PromiseSettledResult<MarketPrints>;
}

/** The book's section; `draw` paints its depth chart once the section is on the page. */
export function bookSection(book: BookKey, a: BookAnswers): { el: HTMLElement; draw: () => void } {
  const status = windowStatus(book);
  const head = h("h3", {}, t("market.book.title", { model: book.gpu_model, region: book.region, currency: book.currency }),
    h("span", { class: `badge window-${status}`, "data-testid": "market-window-status" }, t(`market.book.${status}`)));
  const failed = [a.quote, a.depth, a.prints].find((r) => r.status === "rejected");
  if (failed) return { el: h("section", { "data-testid": "market-book" }, head, problemNotice(failed.reason, "market-book-error")), draw: () => {} };
  const quote = (a.quote as PromiseFulfilledResult<MarketQuote>).value;
  const depth = (a.depth as PromiseFulfilledResult<MarketDepth>).value;
  const prints = (a.prints as PromiseFulfilledResult<MarketPrints>).value.prints;
  const window = periodNote((from, to) => t("market.book.window", { from, to }), quote.starts_at, quote.ends_at, "market-window");
  window.append(` · ${t("market.book.hours", { n: quote.window_hours })}`);

  const side = (label: string, level: BookLevel | null, testid: string) =>
    stat(level ? num(level.price_per_gpu_hour) : t("market.quote.empty_side"),
      level ? `${label} · ${t("market.quote.level", { gpus: level.gpus, orders: level.orders })}` : label, testid);
  const spread = quote.bid && quote.ask ? decimalSum([quote.ask.price_per_gpu_hour, `-${quote.bid.price_per_gpu_hour}`]) : null;
  const last = prints[0]?.price_per_gpu_hour;
  const cards = h("div", { class: "cards", "data-testid": "market-quote" },
    side(t("market.quote.bid"), quote.bid, "market-bid"),
    side(t("market.quote.ask"), quote.ask, "market-ask"),
    stat(spread === null ? "—" : num(spread), t("market.quote.spread"), "market-spread"),
    stat(last === undefined ? "—" : num(last), t("market.quote.last"), "market-last"));

  const empty = depth.bids.length === 0 && depth.asks.length === 0;
  const chartEl = h("div", { class: "chart", "data-testid": "market-depth-chart", style: "height:300px" });
  const el = h("section", { "data-testid": "market-book" },
    head, window, cards,
    h("p", { class: "muted" }, t("market.quote.unit", { currency: quote.currency })),
    h("h3", {}, t("market.depth.title")),
    empty
      ? notice("info", t("market.depth.empty"), "market-depth-empty")
      : h("div", { class: "chart-grid" },
          h("section", {}, h("h3", {}, t("market.depth.ladder")), ladder(depth)),
          h("section", {}, h("h3", {}, t("market.depth.chart")), chartEl)),
    h("p", { class: "muted" }, t("market.depth.note")),
    h("h3", {}, t("market.prints.title")),
    prints.length === 0
      ? notice("info", t("market.prints.empty"), "market-prints-empty")
      : table("market-prints",
          [t("market.col.time"), t("market.col.price"), t("market.col.gpus"), t("market.col.gpu_hours"), t("market.col.taker")],
          prints.map((p) => [
            when(p.at), num(p.price_per_gpu_hour), num(String(p.gpus)),
            num(String(p.gpus * quote.window_hours)), sideLabel(p.taker_side),
          ])),
    prints.length === 0 ? null : h("p", { class: "muted" }, t("market.prints.note")),
  );
  const draw = () => {
    if (empty) return;
    depthChart(chartEl, depth.bids, depth.asks, {
      bids: t("market.depth.bids"),
      asks: t("market.depth.asks"),
      gpus: t("market.depth.gpus_axis"),
      last: (price) => t("market.depth.last", { price }),
      tip: (s, level, cumulative) => t("market.depth.tip", {
        side: s === "bid" ? t("market.depth.bids") : t("market.depth.asks"),
        price: level.price_per_gpu_hour, gpus: level.gpus, orders: level.orders, cumulative,
      }),
    }, last);
  };
  return { el, draw };
}

/** The two-sided ladder: asks above (worst on top), bids below (best on top), one price a row. */
function ladder(depth: MarketDepth): HTMLElement {
  const rows = [
    ...[...depth.asks].reverse().map((l) => ({ side: "ask", l })),
    ...depth.bids.map((l) => ({ side: "bid", l })),
  ];
  return table("market-ladder",
    [t("market.depth.col.bid_orders"), t("market.depth.col.bid_gpus"), t("market.depth.col.price"), t("market.depth.col.ask_gpus"), t("market.depth.col.ask_orders")],
    rows.map(({ side, l }) => side === "bid"
      ? [num(String(l.orders)), num(String(l.gpus)), h("span", { class: "num bid" }, l.price_per_gpu_hour), "", ""]
      : ["", "", h("span", { class: "num ask" }, l.price_per_gpu_hour), num(String(l.gpus)), num(String(l.orders))]),
    rows.map(({ side, l }) => `${side}-${l.price_per_gpu_hour}`));
}
