// Shared by the browser test's files: the pass/fail tally, the API client, page helpers, and the
// dashboard's number rules (web/src/format.ts) applied to the API's answers, so a check compares
// what the page must show character by character.

import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const artifacts = path.resolve(process.env.ARTIFACT_DIR ?? path.join(here, "artifacts"));
export const STEP_TIMEOUT_MS = 15000;
// The dashboard endpoints rate a week of invoices or scan a week of samples per request: on a
// slow machine that takes tens of seconds.
export const DASHBOARD_TIMEOUT_MS = Number(process.env.DASHBOARD_TIMEOUT_S ?? 120) * 1000;

let failures = 0;
let passes = 0;
export function check(ok, what) {
  if (ok) passes++;
  else failures++;
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  return ok;
}

export function tally() {
  return { passes, failures };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function api(base, token, method, route, body) {
  const response = await fetch(`${base}/api/v1/${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : method === "POST" ? "{}" : undefined,
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : null };
}

// --- page helpers ---------------------------------------------------------------------

export const cellText = async (locator) => (await locator.innerText()).trim();

/** Navigates to a view and returns the JSON of the API answer the page rendered. */
export async function openView(page, hash, apiPath, method = "GET") {
  const timeout = apiPath.startsWith("dashboard/") ? DASHBOARD_TIMEOUT_MS : STEP_TIMEOUT_MS;
  const answer = page.waitForResponse(
    (r) => r.url().includes(`/api/v1/${apiPath}`) && r.request().method() === method,
    { timeout },
  );
  await page.evaluate((h) => { location.hash = h; }, hash);
  const response = await answer;
  const view = hash.replace(/^#\//, "").split("?")[0];
  await page.locator(`main[data-testid="view-${view}"]:not([data-loading])`).waitFor({ timeout });
  return { status: response.status(), json: await response.json(), url: response.url() };
}

export async function shot(page, name) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // charts painted
  const file = path.join(artifacts, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`     screenshot ${file}`);
}

export async function login(page, token) {
  await page.getByTestId("login-token").fill(token);
  await page.getByTestId("login-submit").click();
  await page.getByTestId("scope").waitFor({ timeout: STEP_TIMEOUT_MS });
}

/** Runs `body` on the page: a failure leaves a screenshot named `failureShot`; uncaught page errors fail a check. */
export async function runOnPage(page, failureShot, body) {
  const pageErrors = [];
  page.on("pageerror", (e) => {
    pageErrors.push(String(e));
    console.log(`     pageerror: ${e.stack ?? e}`); // where it happened, among the steps
  });
  let result;
  try {
    result = await body();
  } catch (e) {
    await shot(page, failureShot).catch(() => {});
    throw e;
  }
  check(pageErrors.length === 0, `no uncaught errors in the page${pageErrors.length ? `: ${pageErrors.join("; ")}` : ""}`);
  return result;
}

/** Stops a server the test started and waits for it to exit. */
export async function stopServer(server) {
  if (!server) return;
  server.kill("SIGTERM");
  await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once("exit", resolve)));
}

export async function logout(page) {
  await page.getByTestId("logout").click();
  await page.getByTestId("login-form").waitFor({ timeout: STEP_TIMEOUT_MS });
}

// --- the dashboard's number rules (web/src/format.ts) ------------------------------------

function parseDecimal(text) {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`not a decimal: ${text}`);
  const units = BigInt(m[2] + (m[3] ?? ""));
  return { units: m[1] ? -units : units, scale: (m[3] ?? "").length };
}

function fixed(units, scale) {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** The exact sum of decimal strings at their largest scale. */
export function decimalSum(values) {
  const parsed = values.map(parseDecimal);
  const scale = Math.max(0, ...parsed.map((d) => d.scale));
  return fixed(parsed.reduce((sum, d) => sum + d.units * 10n ** BigInt(scale - d.scale), 0n), scale);
}

export function decimalCompare(a, b) {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const scale = Math.max(x.scale, y.scale);
  const d = x.units * 10n ** BigInt(scale - x.scale) - y.units * 10n ** BigInt(scale - y.scale);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/** To 2 decimals, half to even, on the digits (web/src/format.ts centsText). */
export function centsText(text) {
  const d = parseDecimal(text);
  if (d.scale <= 2) return fixed(d.units * 10n ** BigInt(2 - d.scale), 2);
  const div = 10n ** BigInt(d.scale - 2);
  const abs = d.units < 0n ? -d.units : d.units;
  let q = abs / div;
  const r = abs % div;
  if (2n * r > div || (2n * r === div && q % 2n === 1n)) q += 1n;
  return fixed(d.units < 0n ? -q : q, 2);
}
// The rule itself, by hand: a wrong mirror would make the page checks meaningless.
for (const [x, want] of [["57666.550196", "57666.55"], ["0.125", "0.12"], ["0.135", "0.14"], ["-1.005", "-1.00"], ["2.1", "2.10"], ["9.995001", "10.00"]]) {
  if (centsText(x) !== want) throw new Error(`centsText(${x}) = ${centsText(x)}, want ${want}`);
}

export const bpText = (bp) => (bp === null ? "—" : `${fixed(BigInt(bp), 2)}%`);
export const permilleText = (p) => (p === null ? "—" : `${fixed(BigInt(p), 1)}%`);
export const metricText = (v) => (v === null ? "—" : String(Number(v.toPrecision(4))));
export const intText = (v, unit = "") => (v === null ? "—" : `${v}${unit}`);
export const cardLabel = (c) => c.label; // as the page names a card: the API's label, checked by cardLabels
// The API's rule for a list's labels: "node #gpu", "supplier/node #gpu" where two nodes share the name.
export const cardLabels = (cards) => {
  const ids = new Map();
  for (const c of cards) ids.set(c.node, (ids.get(c.node) ?? new Set()).add(c.node_id));
  return cards.map((c) => `${ids.get(c.node).size > 1 ? `${c.supplier}/` : ""}${c.node} #${c.gpu}`);
};

// --- the dashboard's date rules (web/src/dates.ts), in the browser's time zone -------------
// The test's browser runs in TIME_ZONE with a BROWSER_LOCALE that is neither dashboard language,
// so a date or month named in English or Chinese can only come from the language switch.
export const TIME_ZONE = "Asia/Shanghai"; // UTC+8 all year: an instant reads 8 hours on
export const BROWSER_LOCALE = "fr-FR";
const LANGS = { en: "en", zh: "zh-CN" };
const fmt = (lang, options) => new Intl.DateTimeFormat(LANGS[lang] ?? lang, options);
/** An instant as the page writes it: "Dec 1, 2026, 08:00", "2026年12月1日 08:00". */
export const instantText = (t, lang) =>
  fmt(lang, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: TIME_ZONE }).format(new Date(t));
/** A heatmap hour: "11/29, 22:00". */
export const hourText = (t, lang) =>
  fmt(lang, { month: "numeric", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: TIME_ZONE }).format(new Date(t));
/** The UTC form on hover: "2026-12-01 00:00:00 UTC". */
export const utcText = (t) => `${new Date(t).toISOString().slice(0, 19).replace("T", " ")} UTC`;
export const dateText = (d, lang) => fmt(lang, { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" }).format(new Date(`${d}T00:00:00Z`));
export const monthText = (m, lang) => fmt(lang, { year: "numeric", month: "long", timeZone: "UTC" }).format(new Date(`${m}-01T00:00:00Z`));

/**
 * By hand, not by Intl: "2026年12月1日 08:00" must be the instant `t` in UTC+8 (the Chinese date
 * format and the time zone both checked without trusting the formatter the page uses).
 */
export function isChineseInstant(text, t) {
  const m = /^(\d{4})年(\d{1,2})月(\d{1,2})日 (\d{2}):(\d{2})$/.exec(text);
  if (!m) return false;
  const local = new Date(new Date(t).getTime() + 8 * 3_600_000); // Asia/Shanghai: UTC+8, no DST
  return Number(m[1]) === local.getUTCFullYear() && Number(m[2]) === local.getUTCMonth() + 1 && Number(m[3]) === local.getUTCDate()
    && Number(m[4]) === local.getUTCHours() && Number(m[5]) === local.getUTCMinutes();
}

/** An amount with its currency at the currency's precision (USD, CNY: cents), as alert messages show it. */
export const moneyInText = (text) => {
  const m = /^(-?\d+(?:\.\d+)?) (USD|CNY)$/.exec(text);
  return m ? `${centsText(m[1])} ${m[2]}` : text;
};

/**
 * An alert's message as the page shows it in `lang`: the server's own sentence (message_en,
 * message_zh) with its money arguments at cents and its `date` / `month` named in the language.
 */
export function alertText(a, lang) {
  let text = lang === "zh" ? a.message_zh : a.message_en;
  const args = Object.entries(a.text_message?.args ?? {}).filter(([, v]) => typeof v === "string");
  for (const [name, value] of args.sort((x, y) => y[1].length - x[1].length)) {
    const shown = name === "date" ? dateText(value, lang) : name === "month" ? monthText(value, lang) : moneyInText(value);
    if (shown !== value) text = text.replaceAll(value, shown);
  }
  return text;
}
