#!/usr/bin/env node
// browser_dashboard: drives the built dashboard (web/dist) in headless Chromium against a
// fresh `gpurent serve --demo`, and checks what it shows against the API's own answers.
// The dashboard views (utilization, costs, cost-performance, supplier health) are checked by
// dashboard_views.mjs, the console (instances, the job form) by console_views.mjs, the market
// by market_views.mjs; helpers.mjs holds the shared helpers.
// Usage: node tests/browser/dashboard_test.mjs /path/to/gpurent
// Env: ARTIFACT_DIR (screenshots; default tests/browser/artifacts), CHROMIUM (default /usr/bin/chromium),
// SERVER_START_TIMEOUT_S (how long the demo may take to listen; default 300), DEMO_DAYS (the
// past days `serve --demo` replays before listening; default 2).
// Exit status 0 when every check passes, 1 otherwise.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { instanceConsole } from "./console_views.mjs";
import { chineseDashboard, operatorDashboard, tenantDashboard } from "./dashboard_views.mjs";
import { operatorMarket, tenantMarket } from "./market_views.mjs";
import {
  alertText, api, artifacts, runOnPage, stopServer, BROWSER_LOCALE, cellText, centsText, check, DASHBOARD_TIMEOUT_MS, instantText, login, logout, monthText, openView, shot,
  STEP_TIMEOUT_MS, tally, TIME_ZONE, utcText,
} from "./helpers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const { chromium } = createRequire(path.join(repo, "web/package.json"))("playwright-core");

const binary = path.resolve(process.argv[2] ?? path.join(repo, "build/gpurent"));
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const START_TIMEOUT_S = Number(process.env.SERVER_START_TIMEOUT_S ?? 300);
// Two replayed days hold a supplier outage, the DETR sweep and the pre-training run, so every
// chart has data; the full week (scripts/demo) takes minutes on a small machine.
const DEMO_DAYS = process.env.DEMO_DAYS ?? "2";

// --- the server -----------------------------------------------------------------------

async function startServer(dir) {
  const server = spawn(
    binary,
    ["serve", "--demo", "--db", "./g.db", "--port", "0", "--host", "127.0.0.1", "--static-dir", path.join(repo, "web/dist"),
      "--firewall-interval-s", "1", // the cost firewall runs every second, so an alert appears quickly
      "--demo-days", DEMO_DAYS],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  const stderr = [];
  server.stderr.on("data", (chunk) => stderr.push(chunk));
  const lines = createInterface({ input: server.stdout });
  // The demo replays its past week before it listens: that takes a while on a slow machine.
  const first = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      server.kill("SIGTERM"); // not left running behind a failed test
      reject(new Error(`server did not print its listening line in ${START_TIMEOUT_S} s`));
    }, START_TIMEOUT_S * 1000);
    lines.once("line", (line) => { clearTimeout(timer); resolve(line); });
    server.once("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${Buffer.concat(stderr)}`)); });
  });
  lines.on("line", () => {}); // keep draining stdout
  const listening = JSON.parse(first);
  if (listening.event !== "listening" || !listening.url) throw new Error(`unexpected first line: ${first}`);
  const adminToken = readFileSync(path.resolve(dir, listening.admin_token_file), "utf8").trim();
  return { server, url: listening.url.replace(/\/$/, ""), adminToken };
}

// --- the checks -----------------------------------------------------------------------

/** The closed runs the scheduler ended in the last 7 days (what the queue view lists). */
// Opens the jobs view and gathers what its reads of /api/v1/jobs answered (one job per id, its
// later record): the jobs it shows. `unbounded` lists the reads that were neither by queue state
// nor with updated_since.
async function openJobsView(page, hash) {
  const reads = [];
  const onJobs = (r) => {
    if (r.request().method() === "GET" && /\/api\/v1\/jobs\?/.test(r.url())) reads.push({ url: r.url(), body: r.json().catch(() => null) });
  };
  page.on("response", onJobs);
  try {
    await openView(page, hash, "jobs?updated_since=");
  } finally {
    page.off("response", onJobs);
  }
  const byId = new Map();
  for (const r of reads)
    for (const j of (await r.body)?.items ?? []) {
      const seen = byId.get(j.id);
      if (!seen || j.status.updated_at > seen.status.updated_at) byId.set(j.id, j);
    }
  const unbounded = reads.map((r) => r.url).filter((u) => !/jobs\?(state=(pending|admitted|running)|updated_since=)/.test(u));
  return { json: { items: [...byId.values()] }, reads, unbounded };
}

async function interruptedRuns(base, token) {
  const closed = [];
  for (let after = ""; ;) {
    const page1 = (await api(base, token, "GET", `allocations?state=closed&limit=1000${after ? `&after=${after}` : ""}`)).json;
    closed.push(...page1.items);
    if (!page1.next_after) break;
    after = page1.next_after;
  }
  const since = new Date(Date.now() - 7 * 86_400_000).toISOString();
  return closed.filter((a) => ["preempted", "requeued", "replica lost"].some((p) => a.end_reason.startsWith(p)) && a.ended_at >= since);
}

async function run(page, base, adminToken) {
  const month = new Date().toISOString().slice(0, 7);

  // A job that must wait, so the queue has a reason to show: 16 GPUs on one worker, where every
  // Ascend node has 8 (a quota-full project is not enough: the tenant's idle sibling quota may be
  // lent to it). First let the scheduler place every demo job, so the counts below are settled
  // (a job held by the cost firewall — an egress freeze or a budget — stays pending by design).
  const held = (j) => /^(egress frozen|budget|balance): /.test(j.status.reason ?? "");
  for (let i = 0; ; i++) {
    const all = await api(base, adminToken, "GET", "jobs?limit=100");
    const waiting = (all.json?.items ?? []).filter((j) => j.status.state === "pending" && !held(j)).length;
    if (all.status === 200 && all.json.items.length > 0 && waiting === 0) break;
    if (i >= 200) throw new Error(`the demo's jobs were not all placed after 20 s (${waiting} pending)`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const qingyunId = (await api(base, adminToken, "GET", "tenants/qingyun-tech")).json.id;
  // A node failure the queue view must show (and the tenant's own view, later): the operator marks the node of a running job
  // unavailable; the scheduler requeues the job (the reason kept) and places it again elsewhere.
  // (Not an inference job: losing a replica above its minimum is not a requeue.)
  const running = (await api(base, adminToken, "GET", "jobs?state=running&limit=100")).json.items
    .find((j) => j.tenant_id === qingyunId && j.kind !== "inference" && j.status.placement.length > 0
      && j.status.placement.every((p) => p.gpu_milli === undefined));
  if (check(running !== undefined, `a running job to interrupt (${running?.name})`)) {
    const failedNode = (await api(base, adminToken, "GET", `nodes/${running.status.placement[0].node}`)).json;
    const down = await api(base, adminToken, "PUT", `nodes/${failedNode.id}`,
      { ...failedNode, state: "unavailable", state_reason: "browser test: Xid 79, GPU has fallen off the bus" });
    check(down.status === 200, `node ${failedNode.name} marked unavailable (HTTP ${down.status})`);
    let requeued;
    for (let i = 0; i < 100 && !requeued; i++) {
      const runs = (await api(base, adminToken, "GET", `allocations?state=closed&limit=1000`)).json.items;
      requeued = runs.find((a) => a.job_id === running.id && a.end_reason.startsWith(`requeued: node ${failedNode.name} failed`));
      if (!requeued) await new Promise((r) => setTimeout(r, 200));
    }
    check(requeued !== undefined, `the scheduler requeued ${running.name}: "${requeued?.end_reason}"`);
    const back = (await api(base, adminToken, "GET", `nodes/${failedNode.id}`)).json;
    delete back.state_reason;
    const up = await api(base, adminToken, "PUT", `nodes/${failedNode.id}`, { ...back, state: "available" });
    check(up.status === 200, `node ${failedNode.name} back in service (HTTP ${up.status})`);
  }
  const queued = await api(base, adminToken, "POST", "jobs", {
    name: "browser-queued", project: "pretrain", kind: "batch", workers: 1, gpus_per_worker: 16,
    constraints: { gpu_models: ["ascend-910b-64gb"] }, image: "busybox:1.36", command: ["true"],
    expected_duration_seconds: 3600,
  });
  check(queued.status === 201, `submit a job that has to queue (HTTP ${queued.status})`);
  // Until the scheduler has looked at it, it says "submitted"; the views below expect its wait reason.
  for (let i = 0; i < 100; i++) {
    const code = (await api(base, adminToken, "GET", `jobs/${queued.json.id}`)).json.status.reason_message?.code;
    if (code && code !== "job.submitted") break;
    await new Promise((r) => setTimeout(r, 100));
  }

  // 1. Login: a malformed token and an unknown one are refused with a clear message.
  await page.goto(`${base}/`);
  await page.getByTestId("login-form").waitFor({ timeout: STEP_TIMEOUT_MS });
  await page.getByTestId("login-token").fill("not-a-token");
  await page.getByTestId("login-submit").click();
  check((await cellText(page.getByTestId("login-error"))).includes("not a gpurent token"), "malformed token: format error shown");
  await page.getByTestId("login-token").fill(`gpr_${"0".repeat(64)}`);
  await page.getByTestId("login-submit").click();
  await page.getByText("The server refused this token").waitFor({ timeout: STEP_TIMEOUT_MS });
  check(true, "unknown token: refused by the server, message shown");
  await shot(page, "01-login-error");

  await login(page, adminToken);
  check((await cellText(page.getByTestId("scope"))).includes("Operator"), "admin token: signed in as operator");
  check(await page.evaluate(() => localStorage.getItem("gpurent.token")) === adminToken, "token remembered in localStorage");

  // 2. Language: Chinese labels, kept across a reload.
  await page.getByTestId("lang-select").selectOption("zh-CN");
  check((await cellText(page.getByTestId("nav-jobs"))) === "队列与作业", "language switch: Chinese nav label");
  await page.reload();
  await page.getByTestId("nav-jobs").waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await cellText(page.getByTestId("nav-jobs"))) === "队列与作业", "after reload: still Chinese");
  check((await cellText(page.getByTestId("nav-invoices"))) === "账单", "after reload: every nav label Chinese");
  await page.locator('main[data-testid="view-jobs"]:not([data-loading])').waitFor({ timeout: STEP_TIMEOUT_MS });
  // The server's sentences are codes rendered from the shared catalogue: every job reason (the
  // demo's waits, runs ended, the requeue above) reads in Chinese, not as the server's English.
  const CJK = /[\u4e00-\u9fff]/;
  const reasonsZh = await page.locator('main[data-testid="view-jobs"] .reason').allInnerTexts();
  const englishReasons = reasonsZh.filter((r) => r.trim() !== "" && !CJK.test(r));
  check(reasonsZh.length >= 5 && englishReasons.length === 0,
    `zh: ${reasonsZh.length} job reasons, none in English${englishReasons.length ? ` (${englishReasons.slice(0, 3).join(" | ")})` : ""}`);
  const queuedZh = (await api(base, adminToken, "GET", `jobs/${queued.json.id}?lang=zh`)).json.status.reason;
  check(reasonsZh.includes(queuedZh) && CJK.test(queuedZh), `zh: the queued job's reason as the API renders it in zh (${queuedZh})`);
  await shot(page, "02-jobs-zh");
  await page.getByTestId("lang-select").selectOption("en");
  check((await cellText(page.getByTestId("nav-jobs"))) === "Queue & jobs", "switch back to English");

  // 3a. Queue & jobs.
  const interruptedBefore = await interruptedRuns(base, adminToken);
  // The view reads the queue by state and the rest changed in the last 7 days (updated_since),
  // never every job.
  const jobs = await openJobsView(page, "#/jobs?r=1");
  check(jobs.reads.length >= 4 && jobs.unbounded.length === 0,
    `the jobs view reads the queue by state and the last 7 days' other jobs only (${jobs.reads.length} reads${jobs.unbounded.length ? `; unbounded: ${jobs.unbounded[0]}` : ""})`);
  const pending = jobs.json.items.filter((j) => j.status.state === "pending");
  const placed = jobs.json.items.filter((j) => ["running", "admitted"].includes(j.status.state));
  check(pending.some((j) => j.name === "browser-queued"), "API lists the queued job as pending");
  for (const j of pending) {
    const row = page.locator(`[data-testid="jobs-pending-table"] tr[data-row="${j.name}"]`);
    check((await row.count()) === 1 && (await cellText(row)).includes(j.status.reason), `pending ${j.name}: reason "${j.status.reason}" shown`);
  }
  // A gang's shape reads workers × GPUs per worker, as the CLI writes it (`1x16`).
  const shape = (await page.locator('[data-testid="jobs-pending-table"] tr[data-row="browser-queued"] td').allInnerTexts())[4];
  check(shape === "1×16", `the queued job's shape reads workers × GPUs: "${shape}"`);
  // Times in the chosen language and the browser's time zone (${TIME_ZONE}), UTC on hover.
  const queuedJob = pending.find((j) => j.name === "browser-queued");
  if (queuedJob) {
    const updated = page.locator('[data-testid="jobs-pending-table"] tr[data-row="browser-queued"] td time');
    const [text, title] = [await cellText(updated), await updated.getAttribute("title")];
    check(text === instantText(queuedJob.status.updated_at, "en") && title === utcText(queuedJob.status.updated_at),
      `the queued job's update time in English and ${TIME_ZONE}: "${text}", hover "${title}" (API ${queuedJob.status.updated_at})`);
  }
  check(placed.length > 0, `API has running/admitted jobs (${placed.length})`);
  for (const j of placed) {
    const text = await cellText(page.locator(`[data-testid="jobs-running-table"] tr[data-row="${j.name}"]`));
    const p = j.status.placement[0];
    const ok = p && (p.gpus.length === 0 || text.includes(`GPUs [${p.gpus.join(", ")}]`)) && (!p.nvlink_domain || text.includes(p.nvlink_domain))
      && (p.gpu_milli === undefined || text.includes(`${p.gpu_milli}‰`));
    check(ok, `running ${j.name}: placement (GPUs, NVLink domain or share) shown`);
  }
  // Preemptions and requeues of the last 7 days: the ledger's closed runs the scheduler ended.
  // The scheduler may interrupt another run while the page loads: the page holds every run the
  // API listed before it and none the API did not list after it.
  const interrupted = await interruptedRuns(base, adminToken);
  const shownRuns = await page.locator('[data-testid="jobs-interrupted-table"] tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.row));
  check(interruptedBefore.length > 0 && interruptedBefore.every((a) => shownRuns.includes(a.id)) && shownRuns.every((id) => interrupted.some((a) => a.id === id)),
    `preemptions and requeues: every interrupted run listed (${shownRuns.length}; the API: ${interruptedBefore.length} before the page, ${interrupted.length} after)`);
  const nodeNames = new Map((await api(base, adminToken, "GET", "nodes?limit=1000")).json.items.map((n) => [n.id, n.name]));
  for (const a of interruptedBefore.slice(0, 5)) {
    const cells = await page.locator(`[data-testid="jobs-interrupted-table"] tr[data-row="${a.id}"] td`).allInnerTexts();
    // Node ids in the reason read as the nodes' names.
    const reason = a.end_reason.replace(/\bnod_[0-9a-f]+\b/g, (id) => nodeNames.get(id) ?? id);
    check(cells[0] === a.job && cells[3] === instantText(a.ended_at, "en") && cells[5] === reason,
      `interrupted run of ${a.job}: ended ${a.ended_at} (page: ${cells[3]}), "${reason}" (page: "${cells[5]}")`);
  }
  const summaryTotal = await page.locator('[data-testid="jobs-summary"] .card-value').allInnerTexts();
  check(summaryTotal.reduce((a, b) => a + Number(b), 0) === jobs.json.items.length, "state counts add up to the API's job count");
  await shot(page, "03-jobs");

  // 3b. Invoices (operator: tenant selector from /tenants).
  const invoice = await openView(page, `#/invoices?tenant=aurora-ai&month=${month}`, "invoices");
  check(invoice.status === 200, `invoice for aurora-ai ${month} (HTTP ${invoice.status})`);
  const options = await page.locator('[data-testid="invoice-tenant"] option').allInnerTexts();
  check(options.length === 2, `operator's tenant selector lists both demo tenants (${options.length})`);
  for (const [currency, totals] of Object.entries(invoice.json.totals)) {
    const cells = await page.locator(`[data-testid="invoice-totals"] tr[data-row="${currency}"] td`).allInnerTexts();
    check(cells[1] === totals.charges && cells[3] === totals.total, `invoice ${currency} total shown exactly: ${totals.total} (page: ${cells[3]})`);
  }
  for (const [i, s] of invoice.json.sections.entries()) {
    const amounts = await page.locator(`[data-testid="invoice-lines-${i}"] tbody tr td:last-child`).allInnerTexts();
    check(JSON.stringify(amounts) === JSON.stringify(s.lines.map((l) => l.amount)), `section ${s.contract} (${s.currency}): every line amount exact`);
    check((await cellText(page.getByTestId(`invoice-section-total-${i}`))).includes(s.totals.total), `section ${s.contract}: total ${s.totals.total} shown`);
  }
  // The month named in English (the browser's locale is ${BROWSER_LOCALE}), picked from English month names.
  const monthOptions = await page.locator('[data-testid="invoice-month-month"] option').allInnerTexts();
  const chosenMonth = await page.locator('[data-testid="invoice-month-month"]').inputValue();
  const chosenYear = await page.locator('[data-testid="invoice-month-year"]').inputValue();
  check((await cellText(page.getByTestId("invoice-title"))) === `aurora-ai · ${monthText(month, "en")}` && monthOptions[0] === "January"
    && monthOptions.length === 12 && `${chosenYear}-${chosenMonth}` === month,
    `invoice month in English: "${await cellText(page.getByTestId("invoice-title"))}", picker ${chosenYear} ${monthOptions[Number(chosenMonth) - 1]} (${monthOptions.slice(0, 3).join(", ")}, …)`);
  await shot(page, "04-invoices");
  // In Chinese a line's units are the catalogue's: a GPU-second is GPU·秒.
  const gpuSecondLines = invoice.json.sections.flatMap((s) => s.lines).filter((l) => l.unit === "GPU-second").length;
  await page.getByTestId("lang-select").selectOption("zh-CN");
  await page.getByTestId("invoice-title").filter({ hasText: "年" }).waitFor({ timeout: STEP_TIMEOUT_MS });
  const zhUnits = (await page.locator('[data-testid^="invoice-lines-"] tbody tr td:nth-child(6)').allInnerTexts())
    .filter((x) => x.endsWith(" GPU·秒")).length;
  check(gpuSecondLines > 0 && zhUnits === gpuSecondLines, `zh: ${zhUnits} of ${gpuSecondLines} GPU-second quantities read GPU·秒`);
  await page.getByTestId("lang-select").selectOption("en");
  await page.getByTestId("invoice-title").filter({ hasText: "aurora-ai ·" }).filter({ hasNotText: "年" }).waitFor({ timeout: STEP_TIMEOUT_MS });

  // 3c. Offers: table and chart.
  const offers = await openView(page, "#/offers", "offers");
  check(offers.json.items.length > 0, `API lists offers (${offers.json.items.length})`);
  for (const o of offers.json.items) {
    const cells = await page.locator(`[data-testid="offers-table"] tr[data-row="${o.name}"] td`).allInnerTexts();
    check(cells[5] === o.prices.on_demand, `offer ${o.name}: on-demand ${o.prices.on_demand} ${o.currency} (page: ${cells[5]})`);
  }
  for (const currency of new Set(offers.json.items.map((o) => o.currency))) {
    const labels = await page.locator(`[data-testid="offers-chart-${currency}"] svg text`).allTextContents();
    const expected = offers.json.items.filter((o) => o.currency === currency).map((o) => o.prices.on_demand);
    check(expected.every((v) => labels.includes(v)), `${currency} chart labels every bar with the exact price`);
  }
  await shot(page, "05-offers");

  // 3c'. Market: the demo book's quote, depth, the trade at 2.10, the index; orders and trades; in zh.
  const demoBook = await operatorMarket(page, base, adminToken);

  // 3d. Suppliers.
  const advice = await openView(page, "#/suppliers", "advise/suppliers", "POST");
  check(advice.status === 200 && advice.json.suppliers.length > 0, `supplier advice (${advice.json.suppliers.length} suppliers)`);
  for (const s of advice.json.suppliers) {
    const cells = await page.locator(`[data-testid="suppliers-table"] tr[data-row="${s.name}"] td`).allInnerTexts();
    check(cells[1] === s.score && cells[4] === s.share_pct, `supplier ${s.name}: score ${s.score}, share ${s.share_pct}% shown`);
    const blocked = s.hard_failures.map((id) => s.items.find((i) => i.id === id)?.text ?? id);
    check(blocked.every((b) => cells[2].includes(b)), `supplier ${s.name}: blocked-by items shown (${s.hard_failures.join(", ") || "none"})`);
  }
  check((await cellText(page.getByTestId("suppliers-split"))).includes(advice.json.split.text), "procurement split text shown");
  const scoreLabels = await page.locator('[data-testid="suppliers-chart"] svg text').allTextContents();
  check(advice.json.suppliers.every((s) => scoreLabels.includes(s.score)), "score chart labels every bar with the exact score");
  await shot(page, "06-suppliers");

  // 3e. Alerts: the demo starts with none; a zero budget on vision makes the firewall raise a
  // budget breach, which the operator lifts from the page.
  const noAlerts = await openView(page, "#/alerts", "alerts");
  if (noAlerts.json.items.length === 0) check((await cellText(page.getByTestId("alerts-empty"))).includes("No alerts"), "alerts: empty state shown");
  else check((await page.locator('[data-testid="alerts-table"] tbody tr').count()) === noAlerts.json.items.length, "alerts: every alert listed");
  const quota = (await api(base, adminToken, "GET", "projects/vision/quota")).json;
  const zeroBudget = await api(base, adminToken, "PUT", "projects/vision/quota", { ...quota, monthly_budget: "0" });
  check(zeroBudget.status === 200, `vision's monthly budget set to 0 (HTTP ${zeroBudget.status})`);
  let breach;
  for (let i = 0; i < 100 && !breach; i++) {
    breach = (await api(base, adminToken, "GET", "alerts?project=vision&state=active")).json.items.find((a) => a.kind === "budget_breach");
    if (!breach) await new Promise((r) => setTimeout(r, 200));
  }
  check(breach !== undefined, "the firewall raised a budget_breach alert for vision");
  if (breach) {
    const listed = await openView(page, "#/alerts?r=2", "alerts");
    check(listed.json.items.some((a) => a.id === breach.id), "alerts view read the new alert");
    const cells = await page.locator(`[data-testid="alerts-table"] tr[data-row="${breach.id}"] td`).allInnerTexts();
    check(cells[0].includes("Budget reached") && cells[1].includes("vision") && cells[1].includes("aurora-ai"), `alert row: kind and project/tenant (${cells.slice(0, 2).join(" | ")})`);
    // Money at the currency's precision (the exact figure on hover), the message's amounts too.
    const figure = (x) => (/^[A-Z]{3}$/.test(breach.unit) ? centsText(x) : x);
    check(cells[2] === `${figure(breach.measured)} ${breach.unit} / ${figure(breach.threshold)} ${breach.unit}`
      && (await page.locator(`[data-testid="alerts-table"] tr[data-row="${breach.id}"] td`).nth(2).locator(".num").first().getAttribute("title")) === breach.measured,
      `alert row: figure vs threshold at the currency's precision, exact on hover (${cells[2]}; API ${breach.measured})`);
    check(cells[3].includes("active") && cells[5] === alertText(breach, "en"), `alert row: state and English message (${cells[5]})`);
    check(cells[4] === instantText(breach.first_seen, "en"), `alert row: since ${cells[4]} (API ${breach.first_seen})`);
    await page.getByTestId("lang-select").selectOption("zh-CN");
    await page.locator(`[data-testid="alerts-table"] tr[data-row="${breach.id}"] td`).nth(5)
      .filter({ hasText: "项目" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const zhCells = await page.locator(`[data-testid="alerts-table"] tr[data-row="${breach.id}"] td`).allInnerTexts();
    check(zhCells[5] === alertText(breach, "zh") && zhCells[5].startsWith("项目 vision："), `alert row in zh: the message from the catalogue (${zhCells[5]})`);
    const descriptions = await page.locator('[data-testid="alerts-table"] .description').allInnerTexts();
    check(descriptions.length > 0 && descriptions.every((d) => CJK.test(d)), `zh: all ${descriptions.length} alert messages in Chinese`);
    await page.getByTestId("lang-select").selectOption("en");
    await page.locator(`[data-testid="alerts-table"] tr[data-row="${breach.id}"] td`).nth(5)
      .filter({ hasText: "Project" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    for (const a of listed.json.items.filter((x) => x.freeze_egress)) {
      check((await page.getByTestId(`alert-frozen-${a.id}`).count()) === 1, `egress freeze ${a.id} marked`);
    }
    await shot(page, "10-alerts");
    const lifted = page.waitForResponse((r) => r.url().includes(`/api/v1/alerts/${breach.id}/lift`), { timeout: STEP_TIMEOUT_MS });
    const reread = page.waitForResponse((r) => /\/api\/v1\/alerts\?/.test(r.url()) && r.request().method() === "GET", { timeout: STEP_TIMEOUT_MS });
    await page.getByTestId(`alert-lift-${breach.id}`).click();
    check((await lifted).status() === 200, "Lift: POST /alerts/{id}/lift answered 200");
    await reread;
    await page.getByTestId(`alert-state-${breach.id}`).filter({ hasText: "lifted" }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const after = (await api(base, adminToken, "GET", `alerts/${breach.id}`)).json;
    check(after.state === "lifted" && (await page.getByTestId(`alert-lift-${breach.id}`).count()) === 0, `after Lift: the API and the page say lifted (${after.state})`);
    await shot(page, "11-alerts-lifted");
    await api(base, adminToken, "PUT", "projects/vision/quota", quota);
  }

  // 3f. True cost: the default workload over every offer of one currency, as the page posts it.
  const quoteAnswer = page.waitForResponse((r) => r.url().includes("/api/v1/advise/quotes"), { timeout: STEP_TIMEOUT_MS });
  await page.evaluate(() => { location.hash = "#/truecost"; });
  const quoteResponse = await quoteAnswer;
  await page.locator('main[data-testid="view-truecost"]:not([data-loading])').waitFor({ timeout: STEP_TIMEOUT_MS });
  const quoteBody = quoteResponse.request().postDataJSON();
  const quotes = await api(base, adminToken, "POST", "advise/quotes", quoteBody);
  check(quoteResponse.status() === 200 && quotes.status === 200, `advise/quotes for ${quoteBody.offers.length} offers (HTTP ${quotes.status})`);
  const allOffers = offers.json.items;
  const currencyOf = new Set(quoteBody.offers.map((ref) => allOffers.find((o) => ref.endsWith(`/${o.name}`))?.currency));
  check(currencyOf.size === 1 && !currencyOf.has(undefined), `the page compares offers of one currency (${[...currencyOf].join(", ")})`);
  check(quoteBody.workload.launches_per_month === 120 && quoteBody.workload.gpus === 8, "the default workload was posted");
  const first = quotes.json.ranking[0];
  const firstRow = await page.locator(`[data-testid="truecost-table"] tbody tr`).first().locator("td").allInnerTexts();
  check(firstRow[1] === first.offer && firstRow[3] === first.per_useful_gpu_hour && firstRow[4] === first.list_price,
    `first ranked ${first.offer}: ${first.per_useful_gpu_hour} per useful GPU-hour (page: ${firstRow[3]}), list ${first.list_price}`);
  const perUseful = await page.locator('[data-testid="truecost-table"] tbody tr td:nth-child(4)').allInnerTexts();
  check(JSON.stringify(perUseful) === JSON.stringify(quotes.json.ranking.map((r) => r.per_useful_gpu_hour)), "every per-useful-GPU-hour figure exact, in rank order");
  check((await cellText(page.getByTestId("truecost-misleads"))) === quotes.json.misleads, "misleads text shown in English");
  const quoteLabels = await page.locator('[data-testid="truecost-chart"] svg text').allTextContents();
  check(quotes.json.ranking.every((r) => quoteLabels.includes(r.per_useful_gpu_hour) && quoteLabels.includes(r.list_price)), "chart labels both bars of every offer exactly");
  await shot(page, "12-truecost");

  // A changed workload is posted as typed, and the misleads sentence follows the language.
  await page.getByTestId("lang-select").selectOption("zh-CN");
  await page.locator('main[data-testid="view-truecost"]:not([data-loading])').waitFor({ timeout: STEP_TIMEOUT_MS });
  await page.getByTestId("truecost-idle_pct").fill("0");
  const changedAnswer = page.waitForResponse((r) => r.url().includes("/api/v1/advise/quotes"), { timeout: STEP_TIMEOUT_MS });
  await page.getByTestId("truecost-submit").click();
  const changed = await changedAnswer;
  const changedJson = await changed.json();
  check(changed.request().postDataJSON().workload.idle_pct === 0, "the edited idle % is posted");
  await page.getByTestId("truecost-table").waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await cellText(page.getByTestId("truecost-misleads"))) === changedJson.misleads && /[\u4e00-\u9fff]/.test(changedJson.misleads)
    && changedJson.misleads_message.code.startsWith("advisor.quotes."), `misleads text shown in Chinese (${changedJson.misleads})`);
  const changedFirst = await page.locator('[data-testid="truecost-table"] tbody tr td:nth-child(4)').first().innerText();
  check(changedFirst === changedJson.ranking[0].per_useful_gpu_hour, `new first rank ${changedJson.ranking[0].per_useful_gpu_hour} shown`);
  await shot(page, "13-truecost-zh");
  await page.getByTestId("lang-select").selectOption("en");

  // 3g. The dashboard views: utilization heatmap, costs, cost-performance, supplier health (with a
  // supplier that has no GPUs yet).
  await api(base, adminToken, "POST", "suppliers", { name: "newcomer", display_name: "Newcomer", region: "cn-east", country: "CN",
    sites: [{ name: "site-a", region: "cn-east", city: "Shanghai", tier: 3 }], contact_email: "noc@newcomer.example.com" });
  const shared = await operatorDashboard(page, base, adminToken);
  // 3h. In 简体中文: dates and months, headers and badges unbroken, charges and credits apart.
  await chineseDashboard(page, base, adminToken);

  // 4. A tenant token sees only its tenant.
  const tenants = (await api(base, adminToken, "GET", "tenants")).json.items;
  const qingyun = tenants.find((x) => x.name === "qingyun-tech");
  const user = await api(base, adminToken, "POST", "users", { name: "qingyun-browser", email: "browser@qingyun-tech.example", role: "tenant_admin", tenant: "qingyun-tech" });
  check(user.status === 201, `create tenant_admin user for qingyun-tech (HTTP ${user.status})`);
  const minted = await api(base, adminToken, "POST", "tokens", { user: "qingyun-browser", name: "browser-test" });
  check(minted.status === 201 && typeof minted.json.token === "string", `mint its token (HTTP ${minted.status})`);
  const tenantToken = minted.json.token;

  await logout(page);
  check(await page.evaluate(() => localStorage.getItem("gpurent.token")) === null, "sign-out clears the stored token");
  await login(page, tenantToken);
  check((await cellText(page.getByTestId("scope"))).includes("qingyun-tech"), "tenant token: scope names qingyun-tech");

  const tenantJobs = await openJobsView(page, "#/jobs?r=2");
  check(tenantJobs.json.items.length > 0 && tenantJobs.json.items.every((j) => j.tenant_id === qingyun.id), `tenant's job list holds only its jobs (${tenantJobs.json.items.length})`);
  const tenantCells = await page.locator('main table:not([data-testid="jobs-interrupted-table"]) tbody tr td:nth-child(2)').allInnerTexts();
  check(tenantCells.length === tenantJobs.json.items.length && tenantCells.every((c) => c === "qingyun-tech"), "jobs view: every row is qingyun-tech's");
  const tenantRuns = await page.locator('[data-testid="jobs-interrupted-table"] tbody tr td:nth-child(2)').allInnerTexts();
  check(tenantRuns.length > 0 && tenantRuns.every((c) => c === "qingyun-tech"), `jobs view: its interrupted runs, and only its own (${tenantRuns.length})`);
  const otherJobs = jobs.json.items.filter((j) => j.tenant_id !== qingyun.id).map((j) => j.name);
  const mainText = await cellText(page.locator("main"));
  check(otherJobs.every((n) => !new RegExp(`\\b${n}\\b`).test(mainText)), "jobs view: no other tenant's job name appears");
  await shot(page, "07-tenant-jobs");

  const own = await openView(page, `#/invoices?month=${month}`, "invoices");
  const ownOptions = await page.locator('[data-testid="invoice-tenant"] option').allInnerTexts();
  check(own.status === 200 && own.json.tenant === "qingyun-tech", `tenant invoice is qingyun-tech's (${own.json.tenant})`);
  check(ownOptions.length === 1 && ownOptions[0].startsWith("qingyun-tech"), "tenant selector offers only its own tenant");
  for (const [currency, totals] of Object.entries(own.json.totals)) {
    const cells = await page.locator(`[data-testid="invoice-totals"] tr[data-row="${currency}"] td`).allInnerTexts();
    check(cells[3] === totals.total, `tenant invoice ${currency} total shown exactly: ${totals.total}`);
  }
  await shot(page, "08-tenant-invoices");

  const other = await openView(page, `#/invoices?tenant=aurora-ai&month=${month}`, "invoices");
  check(other.status === 404, `tenant asking for aurora-ai's invoice: HTTP ${other.status}`);
  check((await cellText(page.getByTestId("view-error"))).includes("404"), "the view shows the refusal");
  const direct = await api(base, tenantToken, "GET", `invoices?tenant=aurora-ai&month=${month}`);
  check(direct.status === 404, `API refuses the other tenant's invoice to the tenant token (HTTP ${direct.status})`);
  await shot(page, "09-tenant-other-invoice-refused");

  // 4b. The market for a tenant with no orders: empty states; the demo book named in the form.
  await tenantMarket(page, base, tenantToken, demoBook);

  // 5. The dashboard views for the tenant: only its cards, projects and costs; another tenant's
  // costs refused; its admin lifts the egress freeze; a member sees it but cannot lift it.
  await tenantDashboard(page, base, adminToken, tenantToken, qingyun, shared);

  // 6. The console: instances and the job form, by role, in both languages (console_views.mjs).
  await instanceConsole(page, base, adminToken, tenantToken, qingyun);

  // 7. A supplier's account.
  await supplierAccount(page, base, adminToken);
}

// Only the views whose data a supplier may read (the API refuses it jobs, costs, invoices and
// alerts), and its own cards only; the market (its own sells and trades: none for huadong-aidc).
async function supplierAccount(page, base, adminToken) {
  await logout(page);
  const supplierToken = await api(base, adminToken, "POST", "tokens", { user: "huadong-ops", name: "browser-supplier" });
  check(supplierToken.status === 201, `mint a supplier token for huadong-ops (HTTP ${supplierToken.status})`);
  await login(page, supplierToken.json.token);
  await page.evaluate(() => { location.hash = "#/jobs?r=4"; });
  check((await cellText(page.getByTestId("scope"))) === "Supplier account", "supplier token: signed in as a supplier account");
  const navs = await page.locator("header nav a").evaluateAll((as) => as.map((a) => a.dataset.testid));
  check(JSON.stringify(navs) === JSON.stringify(["nav-utilization", "nav-offers", "nav-market", "nav-suppliers", "nav-truecost"]),
    `supplier nav: utilization, offers, market, suppliers, true cost only (${navs.join(", ")})`);
  await page.locator('main[data-testid="view-utilization"]:not([data-loading])').waitFor({ timeout: DASHBOARD_TIMEOUT_MS });
  check(true, "supplier opening #/jobs lands on utilization");
  for (const route of ["jobs", "dashboard/costs", "alerts"]) {
    const refused = await api(base, supplierToken.json.token, "GET", route);
    check(refused.status === 403, `API refuses ${route} to the supplier (HTTP ${refused.status})`);
  }
  const huadongNodes = new Set((await api(base, adminToken, "GET", "nodes?supplier=huadong-aidc&limit=1000")).json.items.map((n) => n.name));
  const util = await openView(page, "#/utilization?days=7&r=3", "dashboard/utilization");
  check(util.status === 200 && util.json.cards.length > 0 && util.json.cards.every((c) => huadongNodes.has(c.node)),
    `supplier utilization: ${util.json.cards?.length} cards, all on huadong-aidc's nodes`);
  check((await cellText(page.locator('[data-testid="util-card-count"] .card-value'))) === String(util.json.cards.length), "supplier utilization: card count shown");
  await shot(page, "23-supplier-utilization");
  const scores = await openView(page, "#/suppliers?r=3", "advise/suppliers", "POST");
  check(scores.status === 200 && (await page.getByTestId("view-error").count()) === 0, `supplier: the suppliers view opens (HTTP ${scores.status})`);
  const quotes = await openView(page, "#/truecost?r=3", "advise/quotes", "POST");
  check(quotes.status === 200 && (await page.getByTestId("view-error").count()) === 0, `supplier: the true-cost view opens (HTTP ${quotes.status})`);
  const sells = await openView(page, "#/market?r=3", "market-orders");
  check(sells.status === 200 && sells.json.items.length === 0 && (await page.getByTestId("market-no-book").count()) === 1
    && (await page.getByTestId("view-error").count()) === 0, `supplier: the market view opens, no sells of its own, says there is no book (HTTP ${sells.status})`);
}

// --- main -----------------------------------------------------------------------------

async function main() {
  mkdirSync(artifacts, { recursive: true });
  const dir = mkdtempSync(path.join(tmpdir(), "gpurent-browser-"));
  let server;
  let context;
  try {
    const started = await startServer(dir);
    server = started.server;
    console.log(`server ${started.url} (work dir ${dir})`);
    context = await chromium.launchPersistentContext(path.join(dir, "chromium-profile"), {
      executablePath: chromiumPath,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport: { width: 1400, height: 900 },
      timezoneId: TIME_ZONE, // the dashboard writes times in the browser's time zone
      locale: BROWSER_LOCALE, // and dates in the chosen language, never the browser's
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    page.on("console", (m) => { if (m.type() === "error") console.log(`     console: ${m.text()}`); });
    await runOnPage(page, "failure", () => run(page, started.url, started.adminToken));
  } catch (e) {
    check(false, `test aborted: ${e.stack ?? e}`);
  } finally {
    if (context) await context.close().catch(() => {});
    await stopServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
  const { passes, failures } = tally();
  console.log(`browser_dashboard: ${passes} passed, ${failures} failed`);
  process.exit(failures === 0 ? 0 : 1);
}

await main();
