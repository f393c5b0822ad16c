// browser_dashboard, part four: the market view. The operator sees the demo's open book, tomorrow's
// (Lambda's two lots of Ashburn H100s, Aurora's buy that traded at 2.10 and its resting bid at
// 1.90; the same orders in the replayed day's book have expired, and are listed so): quote,
// ladder and depth chart, the trade at 2.10 among the book's prints, the daily price index, and
// every order and trade with their parties — checked against the API's own answers and against
// the demo's values, then in 简体中文. A tenant with no orders sees the empty states, names the
// demo book in the form (a window not on a whole hour is refused, the field named) and sees the
// same public depth without anyone's name; then trades from the order ticket in tomorrow's book
// (a refused price, a resting bid, an IOC bid cancelled at once, the cancel button), also in 简体中文.

import { chineseTimes, unbroken } from "./dashboard_views.mjs";
import { api, cellText, check, dateText, instantText, openView, shot, STEP_TIMEOUT_MS } from "./helpers.mjs";

const CJK = /[\u4e00-\u9fff]/;
const texts = async (locator) => (await locator.allTextContents()).map((x) => x.trim());
const rowCells = (page, table, row) => texts(page.locator(`[data-testid="${table}"] tr[data-row="${row}"] td`));
const cardValue = (page, testid) => cellText(page.locator(`[data-testid="${testid}"] .card-value`));
const waitMarket = (page) => page.locator('main[data-testid="view-market"]:not([data-loading])').waitFor({ timeout: STEP_TIMEOUT_MS });
const BOOK_FIELDS = ["gpu_model", "region", "starts_at", "ends_at", "currency"];
const bookOf = (x) => Object.fromEntries(BOOK_FIELDS.map((k) => [k, x[k]]));
const levels = (side) => JSON.stringify(side.map((l) => [l.price_per_gpu_hour, l.gpus, l.orders]));

/** What the ladder must hold: asks worst first, then bids best first, one row a price. */
async function ladderMatches(page, depth, who) {
  const rows = [...[...depth.asks].reverse().map((l) => ["ask", l]), ...depth.bids.map((l) => ["bid", l])];
  const shown = await page.locator('[data-testid="market-ladder"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.row));
  let ok = JSON.stringify(shown) === JSON.stringify(rows.map(([s, l]) => `${s}-${l.price_per_gpu_hour}`));
  for (const [side, l] of rows) {
    const cells = await rowCells(page, "market-ladder", `${side}-${l.price_per_gpu_hour}`);
    const want = side === "bid" ? [String(l.orders), String(l.gpus), l.price_per_gpu_hour, "", ""] : ["", "", l.price_per_gpu_hour, String(l.gpus), String(l.orders)];
    ok &&= JSON.stringify(cells) === JSON.stringify(want);
  }
  check(ok, `${who}: the ladder holds every level of the API's depth (${shown.join(", ")})`);
}

export async function operatorMarket(page, base, token) {
  // With two replayed days or more the replayed day's book is over (with one it is today's) and its
  // three resting orders expire on the cost firewall's first pass, beside the first views: wait.
  const replayed = Number(process.env.DEMO_DAYS ?? 2) >= 2;
  let orders = [];
  for (let i = 0; i < 120; i++) {
    orders = (await api(base, token, "GET", "market-orders?limit=1000")).json.items;
    if (!replayed || orders.filter((o) => o.state === "expired").length >= 3) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const trades = (await api(base, token, "GET", "market-trades?limit=1000")).json.items;
  // The demo trades in two books of the same orders: the day it replays (over: its resting orders
  // expired) and tomorrow's, still open — the one the page shows.
  const trade = trades.find((x) => x.gpu_model === "h100-sxm5-80gb" && x.region === "us-east-1" && x.price_per_gpu_hour === "2.10"
    && Date.parse(x.ends_at) > Date.now());
  if (!check(trade !== undefined, `the demo's trade at 2.10 in tomorrow's book (the API lists ${trades.length} trade(s), ${orders.length} order(s))`)) return null;
  const book = bookOf(trade);
  const q = new URLSearchParams(book);

  const indexAnswer = page.waitForResponse((r) => r.url().includes("/api/v1/market/index?"), { timeout: STEP_TIMEOUT_MS });
  const view = await openView(page, "#/market", "market/depth");
  const index = await (await indexAnswer).json();
  const asked = new URL(view.url).searchParams;
  check(view.status === 200 && BOOK_FIELDS.every((k) => asked.get(k) === book[k]),
    `market: with no book in the address the page shows the demo book (${asked.toString()})`);
  const depth = view.json;
  // The demo: Lambda sells 16 at 2.10 and 16 at 2.40, Aurora buys 8 at 2.20 (8 trade at 2.10) and bids 8 at 1.90.
  check(levels(depth.asks) === levels([{ price_per_gpu_hour: "2.10", gpus: 8, orders: 1 }, { price_per_gpu_hour: "2.40", gpus: 16, orders: 1 }])
    && levels(depth.bids) === levels([{ price_per_gpu_hour: "1.90", gpus: 8, orders: 1 }]),
    `market: the API's depth is the demo's (asks ${levels(depth.asks)}, bids ${levels(depth.bids)})`);
  await ladderMatches(page, depth, "market");
  const quote = (await api(base, token, "GET", `market/quote?${q}`)).json;
  check((await cardValue(page, "market-bid")) === quote.bid.price_per_gpu_hour && (await cardValue(page, "market-ask")) === quote.ask.price_per_gpu_hour
    && (await cardValue(page, "market-spread")) === "0.20" && (await cardValue(page, "market-last")) === "2.10",
    `market: quote shown — bid ${quote.bid.price_per_gpu_hour}, ask ${quote.ask.price_per_gpu_hour}, spread 0.20, last trade 2.10`);
  const depthLabels = await page.locator('[data-testid="market-depth-chart"] svg text').allTextContents();
  check(["1.90", "2.10", "2.40"].every((p) => depthLabels.includes(p)), "market: the depth chart labels every level with its exact price");

  const prints = (await api(base, token, "GET", `market/prints?${q}`)).json.prints;
  const printRows = await page.locator('[data-testid="market-prints"] tbody tr').count();
  const first = await texts(page.locator('[data-testid="market-prints"] tbody tr').first().locator("td"));
  check(printRows === prints.length && JSON.stringify(first) === JSON.stringify([instantText(trade.at, "en"), "2.10", "8", String(trade.gpu_hours), "buy"]),
    `market: the trade at 2.10 among the book's ${prints.length} print(s): ${first.join(" | ")}`);

  const day = trade.at.slice(0, 10);
  const indexDay = index.days.find((d) => d.day === day);
  const dayCells = await rowCells(page, "market-index-table", day);
  check(indexDay !== undefined && JSON.stringify(dayCells) === JSON.stringify([dateText(day, "en"), indexDay.vwap_per_gpu_hour, String(indexDay.gpu_hours),
    String(indexDay.trades), indexDay.low_per_gpu_hour, indexDay.high_per_gpu_hour]) && indexDay.vwap_per_gpu_hour === "2.10",
    `market: the index of ${day} shown as the API gives it: ${dayCells.join(" | ")}`);
  check((await page.locator('[data-testid="market-index-chart"] svg text').allTextContents()).includes("2.10"), "market: the index chart labels its point 2.10");

  const orderRows = await page.locator('[data-testid="market-orders"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.row));
  check(orderRows.length === orders.length && orders.every((o) => orderRows.includes(o.id)), `market: every order listed (${orderRows.length})`);
  const expired = orders.find((o) => o.side === "buy" && o.state === "expired" && o.price_per_gpu_hour === "1.90");
  const expiredCells = expired ? await rowCells(page, "market-orders", expired.id) : [];
  check(!replayed || expired !== undefined && expiredCells[4] === "expired" && (await page.getByTestId(`market-cancel-${expired.id}`).count()) === 0,
    `market: the replayed day's bid expired, without a cancel button — ${expiredCells.join(" | ")}`);
  const bid = orders.find((o) => o.side === "buy" && o.state === "open" && o.price_per_gpu_hour === "1.90");
  const bidCells = bid ? await rowCells(page, "market-orders", bid.id) : [];
  check(bid !== undefined && bidCells[3] === "buy" && bidCells[4] === "open" && bidCells[5] === "8" && bidCells[6] === "0" && bidCells[7] === "1.90" && bidCells[8] === "aurora-ai",
    `market: Aurora's resting bid — ${bidCells.join(" | ")}`);
  const tradeCells = await rowCells(page, "market-trades", trade.id);
  check(tradeCells[3] === "2.10" && tradeCells[6] === `${trade.amount} USD` && tradeCells[8] === "settled" && tradeCells[9] === "aurora-ai" && tradeCells[10] === "lambda",
    `market: the trade in the trades table — ${tradeCells.join(" | ")}`);
  await shot(page, "28-market");

  // 简体中文: labels, sides and states from the catalogues, times in Chinese and UTC+8, headers unbroken.
  await page.getByTestId("lang-select").selectOption("zh-CN");
  await page.locator("main h2").filter({ hasText: "GPU 小时市场" }).waitFor({ timeout: STEP_TIMEOUT_MS });
  await waitMarket(page);
  const headers = await texts(page.locator("main th"));
  check(headers.length > 0 && headers.every((x) => CJK.test(x)), `zh market: all ${headers.length} column headers in Chinese`);
  const zhBid = bid ? await rowCells(page, "market-orders", bid.id) : [];
  const zhTrade = await rowCells(page, "market-trades", trade.id);
  const zhExpired = expired ? await rowCells(page, "market-orders", expired.id) : [];
  check(zhBid[3] === "买入" && zhBid[4] === "挂单中" && (!replayed || zhExpired[4] === "已过期") && zhTrade[8] === "已结算" && (await cardValue(page, "market-last")) === "2.10",
    `zh market: sides, states and settlement in Chinese (${zhBid[3]}, ${zhBid[4]}, ${zhExpired[4]}, ${zhTrade[8]})`);
  check((await rowCells(page, "market-index-table", day))[0] === dateText(day, "zh"), `zh market: the index day reads ${dateText(day, "zh")}`);
  await chineseTimes(page, "market");
  await unbroken(page, "market");
  await shot(page, "29-market-zh");
  await page.getByTestId("lang-select").selectOption("en");
  await page.locator("main h2").filter({ hasText: "GPU-hour market" }).waitFor({ timeout: STEP_TIMEOUT_MS });
  await waitMarket(page);
  return { book, depth };
}

/** Fills the book form (opening it when it is folded) and returns the depth answer the page read. */
async function nameBook(page, book, starts, ends, nodeGpus = "") {
  const box = page.getByTestId("market-form-box");
  if ((await box.getAttribute("open")) === null) await box.locator("summary").click();
  await page.getByTestId("market-form-gpu_model").selectOption(book.gpu_model);
  await page.getByTestId("market-form-region").fill(book.region);
  await page.getByTestId("market-form-starts_at").fill(starts);
  await page.getByTestId("market-form-ends_at").fill(ends);
  await page.getByTestId("market-form-currency").selectOption(book.currency);
  await page.getByTestId("market-form-node_gpus").fill(nodeGpus);
  const answer = page.waitForResponse((r) => r.url().includes("/api/v1/market/depth?"), { timeout: STEP_TIMEOUT_MS });
  await page.getByTestId("market-form-submit").click();
  const response = await answer;
  await waitMarket(page);
  return { status: response.status(), json: await response.json(), url: response.url() };
}

/** A tenant with no orders (qingyun-tech's admin): empty states, then the demo book named in the form. */
export async function tenantMarket(page, base, tenantToken, demo) {
  const own = await api(base, tenantToken, "GET", "market-orders");
  await openView(page, "#/market", "market-trades");
  check(own.json.items.length === 0 && (await page.getByTestId("market-no-book").count()) === 1 && (await page.getByTestId("market-book").count()) === 0
    && (await page.getByTestId("market-orders-empty").count()) === 1 && (await page.getByTestId("market-trades-empty").count()) === 1,
    "tenant market: no orders or trades — says there is no book, no orders and no trades (no empty chart)");
  await shot(page, "30-tenant-market-empty");
  if (!demo) return;
  const utc = (at) => new Date(at).toISOString().slice(0, 16).replace("T", " ");
  const refused = await nameBook(page, demo.book, utc(demo.book.starts_at).replace(/:00$/, ":30"), utc(demo.book.ends_at));
  const error = page.getByTestId("market-book-error");
  check(refused.status === 422 && (await error.count()) === 1 && (await error.locator('li[data-field="starts_at"]').count()) === 1,
    `tenant market: a window start not on a whole hour is refused, the field named (HTTP ${refused.status}: ${(await error.count()) ? await cellText(error) : "no error shown"})`);
  const named = await nameBook(page, demo.book, utc(demo.book.starts_at), utc(demo.book.ends_at));
  check(named.status === 200 && levels(named.json.asks) === levels(demo.depth.asks) && levels(named.json.bids) === levels(demo.depth.bids),
    "tenant market: the named book's depth is the one the operator saw (public data)");
  await ladderMatches(page, named.json, "tenant market");
  const printed = await texts(page.locator('[data-testid="market-prints"] tbody tr td:nth-child(2)'));
  const mainText = await cellText(page.locator("main"));
  check(printed.includes("2.10") && !/aurora-ai|lambda/.test(mainText), "tenant market: the trade at 2.10 shown, and nobody's name on the page");
  const option = await cellText(page.locator('[data-testid="market-book-select"] option:checked'));
  check(option.includes(demo.book.gpu_model) && option.endsWith("(named below)"), `tenant market: the picker holds the named book ("${option}")`);
  const over = Date.parse(demo.book.ends_at) <= Date.now();
  check((await page.getByTestId("market-ticket-section").count()) === (over ? 0 : 1),
    `tenant market: the order ticket is ${over ? "not offered in a book whose window is over" : "offered in the demo book (its window is not over)"}`);
  await shot(page, "31-tenant-market-named");
  // A book of whole nodes named in the form: a size outside 1..64 is refused in the page, naming the
  // field; 8 opens the book of 8-GPU nodes (its depth asked with node_gpus=8, its label says so).
  const box = page.getByTestId("market-form-box");
  if ((await box.getAttribute("open")) === null) await box.locator("summary").click();
  await page.getByTestId("market-form-node_gpus").fill("0");
  await page.getByTestId("market-form-submit").click();
  const sizeError = page.getByTestId("market-form-error");
  await sizeError.waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await cellText(sizeError)).startsWith("Node size"), `tenant market: a node size of 0 is refused naming the field ("${await cellText(sizeError)}")`);
  const nodeBook = await nameBook(page, demo.book, utc(demo.book.starts_at), utc(demo.book.ends_at), "8");
  const picked = await cellText(page.locator('[data-testid="market-book-select"] option:checked'));
  check(nodeBook.status === 200 && new URL(nodeBook.url).searchParams.get("node_gpus") === "8" && picked.includes("nodes of 8 GPUs"),
    `tenant market: node size 8 opens the book of 8-GPU nodes (HTTP ${nodeBook.status}, "${picked}")`);
  await nameBook(page, demo.book, utc(demo.book.starts_at), utc(demo.book.ends_at));
  await tenantTicket(page, base, tenantToken, demo, utc);
}

/** Places the ticket's order and waits for the view's word on it (or for the refusal). */
async function placeOrder(page, fields) {
  for (const [testid, value] of Object.entries(fields)) {
    const input = page.getByTestId(testid);
    if ((await input.evaluate((el) => el.tagName)) === "SELECT") await input.selectOption(value);
    else await input.fill(value);
  }
  const answer = page.waitForResponse((r) => r.url().endsWith("/api/v1/market-orders") && r.request().method() === "POST", { timeout: STEP_TIMEOUT_MS });
  await page.getByTestId("market-ticket-submit").click();
  const response = await answer;
  const json = await response.json();
  if (response.status() === 201) {
    await page.locator(`main[data-testid="view-market"]:not([data-loading]) [data-testid="market-outcome"]`).waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.locator(`[data-testid="market-orders"] tr[data-row="${json.id}"]`).waitFor({ timeout: STEP_TIMEOUT_MS });
  } else {
    await page.getByTestId("market-ticket-error").waitFor({ timeout: STEP_TIMEOUT_MS });
  }
  return { status: response.status(), json };
}

/**
 * qingyun-tech's admin trades from the ticket in tomorrow's book of the demo's model, region and
 * currency: a refused price names its field; a bid rests (the view says so, the ladder and its
 * orders show it, with a cancel button); changed to less at the same price it keeps its order, to
 * a new price it is replaced by a new one; an IOC bid finds nothing and is cancelled; the cancel
 * button takes the resting bid out of the book — each checked against the API; then in 简体中文.
 */
async function tenantTicket(page, base, tenantToken, demo, utc) {
  const day = 86_400_000;
  const start = (Math.floor(Date.now() / day) + 1) * day;
  const book = { ...bookOf(demo.book), starts_at: new Date(start).toISOString(), ends_at: new Date(start + 8 * 3_600_000).toISOString() };
  await nameBook(page, book, utc(book.starts_at), utc(book.ends_at));
  const sides = await page.locator('[data-testid="market-ticket-side"] option').evaluateAll((os) => os.map((o) => o.value));
  check(JSON.stringify(sides) === JSON.stringify(["buy"]), `ticket: a tenant's admin buys in a book of GPUs (sides offered: ${sides.join(", ")})`);

  const refused = await placeOrder(page, { "market-ticket-qty": "8", "market-ticket-price": "0" });
  const error = page.getByTestId("market-ticket-error");
  check(refused.status === 422 && (await error.locator('li[data-field="price_per_gpu_hour"]').count()) === 1,
    `ticket: a price of 0 is refused, the field named (HTTP ${refused.status}: ${await cellText(error)})`);

  const bid = await placeOrder(page, { "market-ticket-qty": "8", "market-ticket-price": "1.50", "market-ticket-tif": "gtc" });
  const stored = bid.status === 201 ? (await api(base, tenantToken, "GET", `market-orders/${bid.json.id}`)).json : {};
  const said = await cellText(page.getByTestId("market-outcome"));
  check(bid.status === 201 && stored.state === "open" && stored.remaining_gpus === 8 && said.includes(bid.json.id) && said.includes("8 resting in the book"),
    `ticket: a bid of 8 GPUs at 1.50 rests, and the view says so ("${said}")`);
  const depth = (await api(base, tenantToken, "GET", `market/depth?${new URLSearchParams(book)}`)).json;
  check(levels(depth.bids) === levels([{ price_per_gpu_hour: "1.50", gpus: 8, orders: 1 }]), `ticket: the API's depth holds the bid (${levels(depth.bids)})`);
  await ladderMatches(page, depth, "ticket");
  const row = await rowCells(page, "market-orders", bid.json.id);
  check(row[3] === "buy" && row[4] === "open" && row[7] === "1.50" && (await page.getByTestId(`market-cancel-${bid.json.id}`).count()) === 1,
    `ticket: the bid among my orders with a cancel button (${row.join(" | ")})`);
  await shot(page, "32-tenant-market-bid");

  // Change it: less at the same price keeps its place (same order); a new price is a new order.
  const change = async (id, fields, said) => {
    await page.getByTestId(`market-change-${id}`).locator("summary").click();
    for (const [testid, value] of Object.entries(fields)) await page.getByTestId(`${testid}-${id}`).fill(value);
    const answer = page.waitForResponse((r) => r.url().endsWith(`/market-orders/${id}/replace`), { timeout: STEP_TIMEOUT_MS });
    await page.getByTestId(`market-change-apply-${id}`).click();
    const response = await answer;
    await page.locator('main[data-testid="view-market"]:not([data-loading]) [data-testid="market-outcome"]').filter({ hasText: said }).waitFor({ timeout: STEP_TIMEOUT_MS });
    return { status: response.status(), json: await response.json() };
  };
  const less = await change(bid.json.id, { "market-change-qty": "6" }, "changed in place");
  const kept = (await api(base, tenantToken, "GET", `market-orders/${bid.json.id}`)).json;
  check(less.status === 200 && less.json.id === bid.json.id && kept.state === "open" && kept.remaining_gpus === 6,
    `ticket: changing the bid to 6 GPUs at the same price keeps the order (${kept.id}: ${kept.state}, ${kept.remaining_gpus} left)`);
  const repriced = await change(bid.json.id, { "market-change-price": "1.60" }, "was replaced by a new order");
  const old = (await api(base, tenantToken, "GET", `market-orders/${bid.json.id}`)).json;
  const next = repriced.status === 200 ? (await api(base, tenantToken, "GET", `market-orders/${repriced.json.id}`)).json : {};
  check(repriced.json.id !== bid.json.id && old.state === "replaced" && old.replaced_by === next.id && next.state === "open"
    && next.remaining_gpus === 6 && next.price_per_gpu_hour === "1.60" && (await cellText(page.getByTestId("market-outcome"))).includes("6 resting in the book"),
    `ticket: a new price replaces the bid by a new order (${old.state} → ${next.id} at ${next.price_per_gpu_hour}, ${next.remaining_gpus} GPUs)`);

  const ioc = await placeOrder(page, { "market-ticket-qty": "2", "market-ticket-price": "1.40", "market-ticket-tif": "ioc" });
  const iocStored = ioc.status === 201 ? (await api(base, tenantToken, "GET", `market-orders/${ioc.json.id}`)).json : {};
  const iocSaid = await cellText(page.getByTestId("market-outcome"));
  check(iocStored.state === "cancelled" && iocStored.filled_gpus === 0 && iocSaid.includes("the rest was cancelled (immediate or cancel)")
    && (await page.getByTestId(`market-cancel-${ioc.json.id}`).count()) === 0,
    `ticket: an IOC bid with nothing to meet is cancelled at once, no cancel button ("${iocSaid}")`);

  const resting = next.id;
  const cancelled = page.waitForResponse((r) => r.url().endsWith(`/market-orders/${resting}/cancel`), { timeout: STEP_TIMEOUT_MS });
  await page.getByTestId(`market-cancel-${resting}`).click();
  const cancelAnswer = await cancelled;
  await page.locator('main[data-testid="view-market"]:not([data-loading]) [data-testid="market-outcome"]').filter({ hasText: "cancelled:" }).waitFor({ timeout: STEP_TIMEOUT_MS });
  const after = (await api(base, tenantToken, "GET", `market-orders/${resting}`)).json;
  const afterDepth = (await api(base, tenantToken, "GET", `market/depth?${new URLSearchParams(book)}`)).json;
  check(cancelAnswer.status() === 200 && after.state === "cancelled" && afterDepth.bids.length === 0
    && (await page.getByTestId("market-depth-empty").count()) === 1
    && (await cellText(page.getByTestId("market-outcome"))).includes("6 GPUs left the book"),
    `ticket: the cancel button takes the bid out of the book (${after.state}; ${afterDepth.bids.length} bid level(s) left)`);

  await page.getByTestId("lang-select").selectOption("zh-CN");
  await page.locator("main h2").filter({ hasText: "GPU 小时市场" }).waitFor({ timeout: STEP_TIMEOUT_MS });
  await waitMarket(page);
  const zhTitle = await cellText(page.locator('[data-testid="market-ticket-section"] h3'));
  const zhSaid = await cellText(page.getByTestId("market-outcome"));
  check(zhTitle === "在此订单簿下单" && zhSaid.includes("已撤销") && CJK.test(await cellText(page.getByTestId("market-ticket-submit"))),
    `zh ticket: the ticket and the outcome in Chinese ("${zhTitle}", "${zhSaid}")`);
  await shot(page, "33-tenant-market-ticket-zh");
  await page.getByTestId("lang-select").selectOption("en");
  await page.locator("main h2").filter({ hasText: "GPU-hour market" }).waitFor({ timeout: STEP_TIMEOUT_MS });
  await waitMarket(page);
}
