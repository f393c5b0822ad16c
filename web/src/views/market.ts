// "Market": the GPU-hour market (docs/market.md). A book picker — the books of the account's own
// orders and trades (GET /api/v1/market-orders, /market-trades: a tenant's buys, a supplier's
// sells, everything for operators; the open orders and the orders and trades of the last 7 days,
// updated_since), or any book named in a form (GPU model from the catalog,
// region, delivery window in UTC, currency, and a node size for a book of whole nodes) — then the book's quote, depth and recent trades
// (market_book.ts), the daily price index of its model, region and currency (market_index.ts),
// the order ticket (market_ticket.ts: place an order in the book, for those who may trade), and
// the account's orders and trades with a cancel button on open ones (market_mine.ts). The book and
// the index period live in the location hash
// (#/market?gpu_model=…&region=…&starts_at=…&ends_at=…&currency=…[&node_gpus=…]&index_days=30; after a placement
// or a cancel also placed= or cancelled=, the order whose outcome the view tells).
// Times are typed as ISO text in UTC (an <input type=datetime-local> would follow the browser's
// locale and time zone, not the dashboard's language and the book's UTC hours).

import { get, getAll } from "../api";
import type { ViewContext } from "../context";
import { h, notice, replace } from "../dom";
import { labelled, select, textInput } from "../forms";
import { t } from "../i18n";
import type { GpuModel, Offer } from "../types";
import type { BookKey, MarketDepth, MarketIndex, MarketOrder, MarketPrints, MarketQuote, MarketTrade } from "../types_market";
import { bookFromQuery, bookId, bookLabel, bookOf, bookQuery, bookSection, windowStatus } from "./market_book";
import { INDEX_DAYS, indexSection } from "./market_index";
import { ordersSection, tradesSection } from "./market_mine";
import { type Account, outcomeNotice, ticketSection } from "./market_ticket";
import { filterSelect, period } from "./period";

const CURRENCIES = ["USD", "CNY"]; // the market's currencies (docs/market.md)
const MAX_NODE_GPUS = 64; // a node book's size: 1..64 GPUs (docs/market.md)
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const RECENT_DAYS = 7; // the orders (besides the open ones) and trades the view reads

/** The open orders and those placed or changed in the last RECENT_DAYS, one per id (its later record). */
async function recentOrders(since: string): Promise<MarketOrder[]> {
  const [open, recent] = await Promise.all([getAll<MarketOrder>("market-orders", { state: "open" }),
    getAll<MarketOrder>("market-orders", { updated_since: since })]);
  const byId = new Map<string, MarketOrder>();
  for (const o of [...open, ...recent]) {
    const seen = byId.get(o.id);
    if (!seen || o.updated_at > seen.updated_at) byId.set(o.id, o);
  }
  return [...byId.values()];
}

function indexDays(ctx: ViewContext): number {
  const days = Number(ctx.query.get("index_days"));
  return (INDEX_DAYS as readonly number[]).includes(days) ? days : INDEX_DAYS[0];
}

/** The distinct books of the account's orders and trades: windows not over first (soonest first), then the rest (latest first). */
function knownBooks(orders: MarketOrder[], trades: MarketTrade[]): BookKey[] {
  const books = new Map<string, BookKey>();
  for (const b of [...orders, ...trades]) if (!books.has(bookId(b))) books.set(bookId(b), bookOf(b));
  const live = (b: BookKey) => windowStatus(b) !== "over";
  return [...books.values()].sort((a, b) =>
    live(a) !== live(b) ? (live(a) ? -1 : 1) : live(a) ? a.starts_at.localeCompare(b.starts_at) : b.starts_at.localeCompare(a.starts_at));
}

/** The book shown when the hash names none: the newest open order's whose window is not over, else the first known. */
function defaultBook(orders: MarketOrder[], known: BookKey[]): BookKey | null {
  const open = orders.filter((o) => o.state === "open" && windowStatus(o) !== "over").sort((a, b) => b.created_at.localeCompare(a.created_at));
  return open.length > 0 ? bookOf(open[0]) : known[0] ?? null;
}

/** "2026-12-05T00:00:00.000Z" → "2026-12-05 00:00" (the form's UTC text). */
const utcInput = (at: string) => (Number.isNaN(Date.parse(at)) ? at : new Date(at).toISOString().slice(0, 16).replace("T", " "));

/** The form's UTC text → RFC 3339, or null: "2026-12-05 00:00", "2026-12-05T00:00", "…:00Z", "…:00.000Z". */
function parseUtc(text: string): string | null {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?Z?$/.exec(text.trim());
  if (!m) return null;
  const at = `${m[1]}T${m[2]}:${m[3]}:${m[4] ?? "00"}Z`;
  return Number.isNaN(Date.parse(at)) ? null : at;
}

/** The form that names any book; `prefill` is the book shown, else tomorrow's UTC day of the first offer's model and region. */
function bookForm(ctx: ViewContext, prefill: BookKey | null, models: GpuModel[] | null, offers: Offer[], regions: string[],
  extra: Record<string, string>): HTMLElement {
  const firstOffer = [...offers].sort((a, b) => a.name.localeCompare(b.name))[0];
  const tomorrow = (Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS;
  const start = prefill ?? {
    gpu_model: firstOffer?.gpu_model ?? "", region: firstOffer?.region ?? "", currency: firstOffer?.currency ?? CURRENCIES[0],
    starts_at: new Date(tomorrow).toISOString(), ends_at: new Date(tomorrow + DAY_MS).toISOString(),
  };
  const model = models && models.some((m) => m.id === start.gpu_model)
    ? select("market-form-gpu_model", models.map((m) => ({ value: m.id, label: `${m.name} (${m.id})` })), start.gpu_model)
    : textInput("market-form-gpu_model", { value: start.gpu_model });
  const region = textInput("market-form-region", { value: start.region, list: "market-regions" });
  const starts = textInput("market-form-starts_at", { value: utcInput(start.starts_at), placeholder: "YYYY-MM-DD HH:00", size: "17" });
  const ends = textInput("market-form-ends_at", { value: utcInput(start.ends_at), placeholder: "YYYY-MM-DD HH:00", size: "17" });
  const currency = select("market-form-currency", CURRENCIES.map((c) => ({ value: c, label: c })), start.currency);
  // Empty: a book of GPUs; k: the book of whole nodes of k GPUs (docs/market.md#node-books).
  const nodeGpus = textInput("market-form-node_gpus", { value: start.node_gpus ? String(start.node_gpus) : "", size: "4", inputmode: "numeric" });
  const status = h("div", { "data-testid": "market-form-status" });
  const form = h("form", { class: "console-form", "data-testid": "market-form" },
    h("div", { class: "form-grid" },
      labelled(t("market.form.gpu_model"), model), labelled(t("market.form.region"), region),
      labelled(t("market.form.starts_at"), starts), labelled(t("market.form.ends_at"), ends),
      labelled(t("market.form.currency"), currency), labelled(t("market.form.node_gpus"), nodeGpus),
      h("button", { type: "submit", "data-testid": "market-form-submit" }, t("market.form.open"))),
    h("datalist", { id: "market-regions" }, ...regions.map((r) => h("option", { value: r }))),
    h("p", { class: "muted" }, t("market.form.time_help")),
    status);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const example = utcInput(new Date(tomorrow).toISOString());
    const at = [[starts, "market.form.starts_at"], [ends, "market.form.ends_at"]] as const;
    for (const [input, label] of at)
      if (parseUtc(input.value) === null) {
        status.replaceChildren(notice("error", t("market.form.bad_time", { field: t(label), example }), "market-form-error"));
        return;
      }
    if (region.value.trim() === "") {
      status.replaceChildren(notice("error", t("market.form.region_required", { field: t("market.form.region") }), "market-form-error"));
      return;
    }
    const size = nodeGpus.value.trim();
    if (size !== "" && !(/^[0-9]{1,2}$/.test(size) && Number(size) >= 1 && Number(size) <= MAX_NODE_GPUS)) {
      status.replaceChildren(notice("error", t("market.form.bad_node_gpus", { field: t("market.form.node_gpus"), max: MAX_NODE_GPUS }),
        "market-form-error"));
      return;
    }
    ctx.navigate({ ...extra, gpu_model: model.value.trim(), region: region.value.trim(), starts_at: parseUtc(starts.value)!,
      ends_at: parseUtc(ends.value)!, currency: currency.value, ...(size === "" ? {} : { node_gpus: String(Number(size)) }) });
  });
  return h("details", { class: "console", "data-testid": "market-form-box", open: prefill === null }, h("summary", {}, t("market.form.title")), form);
}

export async function renderMarket(root: HTMLElement, ctx: ViewContext): Promise<void> {
  // Not every order and trade ever made: the open orders, and what changed in the last week.
  const since = new Date(Date.now() - RECENT_DAYS * DAY_MS).toISOString();
  const [orders, trades, models, offers, suppliers] = await Promise.allSettled([
    recentOrders(since),
    getAll<MarketTrade>("market-trades", { updated_since: since }),
    get<{ items: GpuModel[] }>("gpu-models"), // one answer: the catalog takes no paging parameters
    getAll<Offer>("offers"),
    ctx.scope.kind === "operator" ? getAll<Account>("suppliers") : Promise.resolve([]), // whom an operator may sell for
  ]);
  const ownOrders = orders.status === "fulfilled" ? orders.value : [];
  const known = knownBooks(ownOrders, trades.status === "fulfilled" ? trades.value : []);
  const typed = bookFromQuery(ctx.query);
  const book = typed ?? defaultBook(ownOrders, known);
  const days = indexDays(ctx);
  const extra = { index_days: String(days) };

  let bookPart: { el: HTMLElement; draw: () => void } | null = null;
  let indexPart: { el: HTMLElement; draw: () => void } | null = null;
  if (book) {
    const { from, to } = period(days, "day");
    const [quote, depth, prints, index] = await Promise.allSettled([
      get<MarketQuote>("market/quote", bookQuery(book)),
      get<MarketDepth>("market/depth", bookQuery(book)),
      get<MarketPrints>("market/prints", bookQuery(book)),
      get<MarketIndex>("market/index", { gpu_model: book.gpu_model, region: book.region, currency: book.currency, from, to }),
    ]);
    bookPart = bookSection(book, { quote, depth, prints });
    indexPart = indexSection(book, days, index);
  }

  const controls = h("form", { class: "controls", "data-testid": "market-controls" });
  controls.addEventListener("submit", (ev) => ev.preventDefault());
  const choices = [...known];
  if (book && !known.some((b) => bookId(b) === bookId(book))) choices.unshift(book); // a book named in the form
  if (choices.length > 0) {
    const picker = h("select", { class: "book-select", "data-testid": "market-book-select", "aria-label": t("market.pick.label") },
      ...choices.map((b) => h("option", { value: bookId(b), selected: book !== null && bookId(b) === bookId(book) },
        known.includes(b) ? bookLabel(b) : `${bookLabel(b)} ${t("market.pick.typed")}`)));
    picker.addEventListener("change", () => {
      const chosen = choices.find((b) => bookId(b) === picker.value);
      if (chosen) ctx.navigate({ ...extra, ...bookQuery(chosen) });
    });
    controls.append(h("label", {}, `${t("market.pick.label")} `, picker));
  }
  controls.append(filterSelect(ctx, "index_days", t("market.index_days"),
    INDEX_DAYS.map((n) => ({ value: String(n), label: t("market.index_days.option", { n }) })), null, String(days)));

  const regions = [...new Set([...(offers.status === "fulfilled" ? offers.value.map((o) => o.region) : []), ...known.map((b) => b.region)])].sort();
  replace(
    root,
    h("h2", {}, t("market.title")),
    h("p", { class: "muted" }, t("market.help")),
    controls,
    outcomeNotice(ctx, ownOrders),
    known.length > 0 ? h("p", { class: "muted" }, t("market.pick.help")) : null,
    book ? null : notice("info", t("market.no_book"), "market-no-book"),
    bookForm(ctx, book, models.status === "fulfilled" ? models.value.items : null, offers.status === "fulfilled" ? offers.value : [], regions, extra),
    ...(bookPart && indexPart ? [bookPart.el] : []),
    book ? ticketSection(ctx, book, suppliers.status === "fulfilled" ? suppliers.value : [], extra) : null,
    ...(bookPart && indexPart ? [indexPart.el] : []),
    ordersSection(ctx, orders, extra),
    tradesSection(ctx, trades, ownOrders, extra),
  );
  bookPart?.draw(); // charts need their boxes on the page
  indexPart?.draw();
}
