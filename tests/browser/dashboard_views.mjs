// browser_dashboard, part two: the dashboard views (utilization heatmap, costs, cost-performance,
// supplier health), checked against GET /api/v1/dashboard/* character by character with the
// page's own number and date rules (helpers.mjs), then the same views in 简体中文 (dates, month
// picker, unbroken headers and badges, charges and credits apart). Holds on whatever the demo has:
// where it has no GPU readings or job metrics yet, the test reports a few first (as an agent and
// a job would).

import {
  alertText, api, bpText, cardLabel, cardLabels, cellText, centsText, check, DASHBOARD_TIMEOUT_MS, decimalCompare, decimalSum, hourText, intText,
  isChineseInstant, login, logout, metricText, openView, permilleText, shot, sleep, utcText,
} from "./helpers.mjs";


const texts = async (locator) => (await locator.allTextContents()).map((x) => x.trim());
const rowCells = (page, table, row) => texts(page.locator(`[data-testid="${table}"] tr[data-row="${row}"] td`));
const svgTexts = (page, testid) => page.locator(`[data-testid="${testid}"] svg text`).allTextContents();
const waitView = (page, view) => page.locator(`main[data-testid="view-${view}"]:not([data-loading])`).waitFor({ timeout: DASHBOARD_TIMEOUT_MS });

/** Changes a filter select and returns the API answer the page read for it. */
async function choose(page, testid, value, apiPath, view) {
  const answer = page.waitForResponse((r) => r.url().includes(`/api/v1/${apiPath}`), { timeout: DASHBOARD_TIMEOUT_MS });
  await page.getByTestId(testid).selectOption(value);
  const response = await answer;
  await waitView(page, view);
  return { status: response.status(), json: await response.json(), url: response.url() };
}

// --- operator ---------------------------------------------------------------------------

export async function operatorDashboard(page, base, token) {
  const tenants = (await api(base, token, "GET", "tenants")).json.items;
  const jobs = (await api(base, token, "GET", "jobs?limit=1000")).json.items;
  await utilization(page, base, token, jobs);
  const freeze = await raiseEgressFreeze(base, token, tenants, jobs);
  await costs(page, freeze);
  await costPerformance(page, base, token, jobs);
  await supplierHealth(page);
  return { freeze };
}

async function utilization(page, base, token, jobs) {
  let util = await openView(page, "#/utilization?days=7", "dashboard/utilization");
  check(util.status === 200, `utilization: GET /dashboard/utilization (HTTP ${util.status})`);
  if (util.status !== 200) return;
  if (util.json.cards.length === 0) {
    // No telemetry in the demo yet: one busy and one idle card of a running job, as an agent reports.
    const job = jobs.find((j) => j.status.state === "running" && j.status.placement.some((p) => p.gpus.length >= 2));
    const p = job.status.placement.find((x) => x.gpus.length >= 2);
    const at = (ms) => new Date(Date.now() - ms).toISOString();
    const gpu_samples = [[p.gpus[0], 85, 2000], [p.gpus[0], 91, 1000], [p.gpus[1], 3, 2000], [p.gpus[1], 4, 1000]]
      .map(([gpu, pct, ago]) => ({ node: p.node, gpu, at: at(ago), utilization_pct: pct }));
    const posted = await api(base, token, "POST", "usage", { idempotency_key: "browser-gpu-1", gpu_samples });
    check(posted.status === 201, `utilization: no readings in the demo, reported 4 for ${job.name} (HTTP ${posted.status})`);
    util = await openView(page, "#/utilization?days=7&r=1", "dashboard/utilization");
  }
  const u = util.json;
  check(u.cards.length > 0 && u.hours.length > 0, `utilization: ${u.cards.length} cards × ${u.hours.length} hours`);
  const first = u.cards[0];
  const idle = u.cards.filter((c) => c.idle);
  check(JSON.stringify(u.cards.map((c) => c.label)) === JSON.stringify(cardLabels(u.cards)), "utilization: every card labelled node #gpu (supplier/ first where two nodes share a name)");
  check((await cellText(page.locator('[data-testid="util-card-count"] .card-value'))) === String(u.cards.length)
    && (await cellText(page.locator('[data-testid="util-idle-count"] .card-value'))) === String(idle.length),
    `utilization: card count ${u.cards.length} and idle count ${idle.length} shown`);
  const firstRow = await rowCells(page, "util-cards", `${first.node_id}/${first.gpu}`);
  check(firstRow[0]?.startsWith(cardLabel(first)) && firstRow[4] === `${first.mean_pct}%` && firstRow[5] === String(first.samples),
    `utilization: first card ${cardLabel(first)}: mean ${first.mean_pct}%, ${first.samples} samples (page: ${firstRow[4]}, ${firstRow[5]})`);
  const means = await texts(page.locator('[data-testid="util-cards"] tbody tr td:nth-child(5)'));
  check(JSON.stringify(means) === JSON.stringify(u.cards.map((c) => `${c.mean_pct}%`)), "utilization: every card's mean % exact, in the API's order");
  if (idle.length > 0) {
    const rows = await page.locator('[data-testid="util-idle-table"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.row));
    check(JSON.stringify(rows) === JSON.stringify(idle.map((c) => `${c.node_id}/${c.gpu}`)), `utilization: the ${idle.length} idle card(s) listed`);
  } else check((await cellText(page.getByTestId("util-idle"))).includes("No idle card"), "utilization: no idle card, said so");

  await heatmapLabels(page, u);
  await shot(page, "14-utilization");

  // Filter by the first card's supplier: only its cards come back, and the node choice narrows.
  const bySupplier = await choose(page, "filter-supplier", first.supplier_id, "dashboard/utilization", "utilization");
  check(bySupplier.status === 200 && new URL(bySupplier.url).searchParams.get("supplier") === first.supplier_id
    && bySupplier.json.cards.length > 0 && bySupplier.json.cards.every((c) => c.supplier_id === first.supplier_id),
    `utilization: supplier filter ${first.supplier}: ${bySupplier.json.cards?.length} cards, all its own`);
  check((await page.locator('[data-testid="util-cards"] tbody tr').count()) === bySupplier.json.cards.length, "utilization: the table follows the filter");
  const nodes = (await api(base, token, "GET", "nodes?limit=1000")).json.items;
  const nodeOptions = (await page.locator('[data-testid="filter-node"] option').evaluateAll((os) => os.map((o) => o.value))).filter(Boolean);
  check(nodeOptions.length > 0 && nodeOptions.every((id) => nodes.find((n) => n.id === id)?.supplier_id === first.supplier_id),
    `utilization: node choices narrowed to ${first.supplier}'s ${nodeOptions.length} nodes`);

  // One node: a small heatmap (SVG), whose rows and tooltip are checked against the answer.
  const byNode = await choose(page, "filter-node", first.node_id, "dashboard/utilization", "utilization");
  check(byNode.status === 200 && byNode.json.cards.length > 0 && byNode.json.cards.every((c) => c.node_id === first.node_id),
    `utilization: node filter ${first.node}: ${byNode.json.cards?.length} cards, all on it`);
  if (byNode.status === 200 && byNode.json.cards.length > 0) {
    await heatmapLabels(page, byNode.json);
    await hoverFirstCard(page, byNode.json);
  }

  // Chinese on this view: labels translated, figures unchanged.
  await openView(page, "#/utilization?days=7", "dashboard/utilization");
  await page.getByTestId("lang-select").selectOption("zh-CN");
  await waitView(page, "utilization");
  const zhRow = await rowCells(page, "util-cards", `${first.node_id}/${first.gpu}`);
  const headers = await texts(page.locator('[data-testid="util-cards"] thead th'));
  check((await cellText(page.locator("main h2").first())) === "GPU 利用率" && headers[4] === "平均利用率" && zhRow[4] === firstRow[4],
    `utilization in Chinese: title and columns translated, mean still ${zhRow[4]}`);
  await shot(page, "15-utilization-zh");
  await page.getByTestId("lang-select").selectOption("en");
  await waitView(page, "utilization");
}

async function heatmapLabels(page, u) {
  const labels = await svgTexts(page, "util-heatmap");
  const shown = u.cards.slice(0, 40); // more rows scroll
  check(shown.every((c) => labels.includes(c.idle ? `▼ ${cardLabel(c)}` : cardLabel(c))),
    `utilization: heatmap rows labelled (${shown.length}), idle ones marked ▼ (${shown.filter((c) => c.idle).length})`);
}

/** Hovers along the first card's row until a cell's tooltip shows, and checks it against the API. */
async function hoverFirstCard(page, u) {
  const label = page.locator('[data-testid="util-heatmap"] svg text').filter({ hasText: cardLabel(u.cards[0]) }).first();
  const chart = await page.getByTestId("util-heatmap").boundingBox();
  const row = await label.boundingBox();
  const tip = page.locator('[data-testid="util-heatmap"] .heat-tip');
  let lines = null;
  const step = Math.max(2, (chart.x + chart.width - row.x - row.width) / (u.hours.length + 4));
  for (let x = row.x + row.width + step; x < chart.x + chart.width - 20 && !lines; x += step) {
    await page.mouse.move(x, row.y + row.height / 2);
    await sleep(40);
    if (await tip.isVisible()) {
      const text = (await tip.innerText()).trim();
      if (text.startsWith(cardLabel(u.cards[0]))) lines = text.split("\n").map((s) => s.trim());
    }
  }
  if (!check(lines !== null, `utilization: hovering ${cardLabel(u.cards[0])}'s row shows a tooltip`)) return;
  // The hour in the browser's time zone, its UTC form beside it.
  const hour = u.hours.findIndex((x) => `${hourText(x, "en")} (${utcText(x)})` === lines[1]);
  const cell = u.cells.find(([c, hr]) => c === 0 && hr === hour);
  check(cell !== undefined && lines[2] === `Mean utilization: ${cell[2]}%` && lines[3] === `Samples: ${cell[3]}`,
    `utilization: tooltip "${lines.join(" / ")}" matches the API's cell`);
  await page.mouse.move(0, 0);
}

/**
 * Reports, for a running qingyun-tech job (training jobs first), egress worth twice the tenant's
 * daily egress threshold at the cheapest egress price of its currency's offers beyond their free
 * allowance, and waits for the cost firewall to freeze the project's egress; tries the next job
 * where a run's egress is not charged.
 */
async function raiseEgressFreeze(base, token, tenants, jobs) {
  const qingyun = tenants.find((x) => x.name === "qingyun-tech");
  const threshold = Number(qingyun.cost_firewall?.egress_daily_cost ?? "500.00"); // the firewall's default
  const offers = (await api(base, token, "GET", "offers?limit=1000")).json.items;
  const fees = offers.filter((o) => o.currency === qingyun.currency && Number(o.fees?.egress?.per_gb) > 0).map((o) => o.fees.egress);
  if (!check(fees.length > 0, `${qingyun.currency} offers charge egress (${fees.length})`)) return null;
  const gb = Math.ceil((2 * threshold) / Math.min(...fees.map((f) => Number(f.per_gb))) + Math.max(...fees.map((f) => f.free_gb ?? 0)));
  const candidates = jobs.filter((j) => j.tenant_id === qingyun.id && j.status.state === "running")
    .sort((a, b) => (b.kind === "training") - (a.kind === "training"));
  for (const job of candidates) {
    const posted = await api(base, token, "POST", "usage", {
      idempotency_key: `browser-egress-${job.id}`,
      job_samples: [{ job: job.id, at: new Date(Date.now() - 1000).toISOString(), egress_bytes: gb * 1e9 }],
    });
    check(posted.status === 201, `${gb} GB of egress reported for ${job.name} (${job.project}; threshold ${threshold} ${qingyun.currency}) (HTTP ${posted.status})`);
    // The firewall rates every tenant's month each pass (--firewall-interval-s 1): on a slow
    // machine a pass takes seconds.
    for (let i = 0; i < DASHBOARD_TIMEOUT_MS / 500; i++) {
      const alerts = (await api(base, token, "GET", "alerts?limit=1000")).json.items;
      const freeze = alerts.find((a) => a.kind === "egress_daily_cost" && a.freeze_egress && a.state === "active" && a.project === job.project);
      if (freeze) {
        check(true, `the cost firewall froze ${job.project}'s egress (${freeze.measured} > ${freeze.threshold} ${freeze.unit})`);
        return freeze;
      }
      await sleep(500);
    }
    console.log(`     no freeze after ${job.name}'s egress; trying the next job`);
  }
  check(false, "no egress freeze raised for any running qingyun-tech job");
  return null;
}

async function costs(page, freeze) {
  const answer = await openView(page, "#/costs?days=7", "dashboard/costs");
  check(answer.status === 200 && answer.json.tenants.length > 0, `costs: GET /dashboard/costs (HTTP ${answer.status}, ${answer.json.tenants?.length} tenant sections)`);
  if (answer.status !== 200) return;
  const c = answer.json;
  for (const x of c.tenants) {
    const key = `${x.tenant}-${x.currency}`;
    const table = `costs-daily-${key}`;
    for (const p of x.projects) {
      const cells = await rowCells(page, table, p.project);
      check(JSON.stringify(cells.slice(1, -1)) === JSON.stringify(p.daily) && cells.at(-1) === p.total,
        `costs ${key}: ${p.project}'s ${c.days.length} day costs and total ${p.total} exact (first day ${c.days[0]}: ${p.daily[0]}, page ${cells[1]})`);
      const share = (await rowCells(page, `costs-projects-${key}`, p.project))[3] ?? "";
      check(share.startsWith(`${p.storage_io_share_pct}%`) && share.includes("over threshold") === p.storage_io_over_threshold,
        `costs ${key}: ${p.project}'s storage I/O share ${p.storage_io_share_pct}% shown${p.storage_io_over_threshold ? ", marked over the threshold" : ""}`);
      if (p.budget) {
        // Derived amounts show to the cent (half to even), the exact figure in the tooltip.
        const remainingNum = page.locator(`[data-testid="budget-remaining-${key}-${p.project}"] .num`);
        const remaining = await cellText(remainingNum);
        const exact = await remainingNum.getAttribute("title");
        const figures = await cellText(page.getByTestId(`costs-budget-${key}-${p.project}`));
        check(remaining === centsText(p.budget.remaining) && exact === p.budget.remaining
          && figures.includes(`${centsText(p.budget.spent)} ${x.currency} / ${p.budget.monthly}`) && figures.includes(centsText(p.budget.projected_month_end)),
          `costs ${key}: ${p.project}'s burn-down: remaining ${p.budget.remaining} (page ${remaining}, tooltip ${exact}), projected ${centsText(p.budget.projected_month_end)}`);
      }
    }
    const totals = await rowCells(page, table, "*total");
    check(JSON.stringify(totals.slice(1, -1)) === JSON.stringify(x.daily_total) && totals.at(-1) === decimalSum(x.daily_total),
      `costs ${key}: tenant total per day exact, period ${decimalSum(x.daily_total)} ${x.currency}`);
    check(JSON.stringify(x.cards.map((c) => c.label)) === JSON.stringify(cardLabels(x.cards)), `costs ${key}: every card labelled node #gpu (supplier/ first where two nodes share a name)`);
    const listedOver = x.cards.filter((c) => c.over_threshold_days > 0);
    if (listedOver.length > 0) {
      const rows = await page.locator(`[data-testid="costs-cards-${key}"] tbody tr td:first-child`).evaluateAll((tds) => tds.map((td) => td.textContent.trim()));
      check(JSON.stringify(rows) === JSON.stringify(listedOver.map(cardLabel)), `costs ${key}: the ${listedOver.length} listed card(s) over the threshold named as the API names them`);
    }
    const unlisted = page.getByTestId(`costs-cards-unlisted-${key}`);
    check((await unlisted.count()) === (x.cards_over_threshold > listedOver.length ? 1 : 0),
      `costs ${key}: ${x.cards_over_threshold - listedOver.length} card(s) over the threshold beyond the listed ${x.cards.length} said so`);
    const overShown = await cellText(page.locator(`[data-testid="costs-cards-over-${key}"] .card-value`));
    check(overShown === String(x.cards_over_threshold), `costs ${key}: ${x.cards_over_threshold} card(s) over ${x.card_threshold} a day shown (page: ${overShown})`);
    const egressLabels = await svgTexts(page, `costs-chart-egress-${key}`);
    check(egressLabels.includes(`${x.egress_threshold} ${x.currency}`), `costs ${key}: egress chart draws the ${x.egress_threshold} threshold`);
    if (x.alerts.length > 0) {
      const rows = await page.locator(`[data-testid="costs-alerts-${key}"] tbody tr`).evaluateAll((trs) =>
        trs.map((tr) => [tr.dataset.row, tr.querySelectorAll("td")[3]?.textContent.trim()]));
      check(JSON.stringify(rows) === JSON.stringify(x.alerts.map((a) => [a.id, alertText(a, "en")])),
        `costs ${key}: the period's ${x.alerts.length} alert(s) listed with their messages (${[...new Set(x.alerts.map((a) => a.kind))].join(", ")})`);
    }
  }
  if (freeze) {
    const listed = c.tenants.flatMap((x) => x.alerts).find((a) => a.id === freeze.id);
    check(listed?.frozen === true && listed.state === "active", `costs: the API lists the freeze ${freeze.id} as frozen`);
    check(await page.getByTestId(`costs-frozen-badge-${freeze.id}`).isVisible(), "costs: EGRESS FROZEN badge shown");
    check((await page.locator(`[data-testid="costs-frozen-${freeze.id}"] [data-testid="alert-lift-${freeze.id}"]`).count()) === 1, "costs: the operator is offered Lift");
  }
  await shot(page, "16-costs");
}

async function seedMetrics(base, token, jobs) {
  const running = jobs.filter((j) => j.status.state === "running").slice(0, 3);
  const at = (ms) => new Date(Date.now() - ms).toISOString();
  for (const [i, j] of running.entries()) {
    const posted = await api(base, token, "POST", `jobs/${j.id}/metrics`, {
      points: [{ name: "val_accuracy", value: 0.5, at: at(4000) }, { name: "val_accuracy", value: 0.5 + 0.04 * i, at: at(1000) }],
    });
    check(posted.status === 201, `cost-performance: no metrics in the demo, reported 2 points for ${j.name} (HTTP ${posted.status})`);
  }
}

async function costPerformance(page, base, token, jobs) {
  let answer = await openView(page, "#/costperf?days=7", "dashboard/cost-performance");
  check(answer.status === 200, `cost-performance: GET /dashboard/cost-performance (HTTP ${answer.status})`);
  if (answer.status !== 200) return;
  if (answer.json.jobs.length === 0) {
    await seedMetrics(base, token, jobs);
    answer = await openView(page, "#/costperf?days=7&r=1", "dashboard/cost-performance");
  }
  const cp = answer.json;
  check(cp.jobs.length > 0, `cost-performance: ${cp.jobs.length} jobs with a metric`);
  check((await cellText(page.locator('[data-testid="costperf-job-count"] .card-value'))) === String(new Set(cp.jobs.map((j) => j.job_id)).size), "cost-performance: job count shown (a job with two metrics is one job)");
  for (const metric of new Set(cp.jobs.map((j) => j.metric))) {
    const ranked = cp.jobs.filter((j) => j.metric === metric).sort((a, b) => a.rank - b.rank);
    const top = ranked[0];
    const cells = await texts(page.locator(`[data-testid="costperf-table-${metric}"] tbody tr`).first().locator("td"));
    check(cells[1] === top.job && cells[7] === metricText(top.gain_per_gpu_hour) && cells[6] === top.gpu_hours
      && cells[9] === (top.cost_per_unit_gain === null ? "—" : `${centsText(top.cost_per_unit_gain)} ${top.currency}`),
      `cost-performance ${metric}: top job ${top.job}: ${metricText(top.gain_per_gpu_hour)} per GPU-hour (page: ${cells[7]}), ${top.gpu_hours} GPU-h, ${top.cost_per_unit_gain === null ? "—" : centsText(top.cost_per_unit_gain)} per unit gain (page: ${cells[9]})`);
    for (const j of ranked) {
      const row = page.locator(`[data-testid="costperf-table-${metric}"] tr[data-row="${j.job_id}"]`);
      const text = await row.textContent();
      const flagged = await row.evaluate((tr) => tr.classList.contains("inefficient"));
      check(flagged === j.inefficient && j.flags.every((f) => text.includes(f.text)),
        `cost-performance ${metric}: ${j.job} ${j.inefficient ? `flagged (${j.flags.map((f) => f.key).join(", ")})` : "not flagged"}`);
      await costParts(page, metric, j, "en");
    }
    const labels = await svgTexts(page, `costperf-chart-${metric}`);
    const drawn = ranked.filter((j) => j.gain_per_gpu_hour !== null); // no GPU time: no ratio to draw
    check(drawn.every((j) => labels.includes(metricText(j.gain_per_gpu_hour))), `cost-performance ${metric}: bar chart labels every job's gain per GPU-hour (${drawn.length})`);
  }
  await shot(page, "17-costperf");

  // Ordered by cost instead: each metric's table follows the exact decimal order of the costs.
  const byCost = await choose(page, "filter-sort", "cost", "dashboard/cost-performance", "costperf");
  check(byCost.status === 200 && byCost.json.jobs.length === cp.jobs.length, `cost-performance ordered by cost: the same ${byCost.json.jobs?.length} jobs`);
  for (const metric of new Set(byCost.json.jobs.map((j) => j.metric))) {
    // Cost before credits: charges and the GPU time a reserved commitment covered (what cost per unit gain divides).
    const before = (j) => decimalSum([j.charges ?? j.cost, j.reserved_covered_value ?? "0"]);
    const expected = byCost.json.jobs.filter((j) => j.metric === metric)
      .sort((a, b) => a.currency.localeCompare(b.currency) || decimalCompare(before(a), before(b))).map((j) => j.job);
    const shown = await texts(page.locator(`[data-testid="costperf-table-${metric}"] tbody tr td:nth-child(2)`));
    check(JSON.stringify(shown) === JSON.stringify(expected), `cost-performance ${metric}: ordered by cost before credits: ${shown.join(", ")}`);
  }
}

const COST_LABELS = {
  en: { charges: "Charges", reserved: "Reserved", credits: "Credits", total: "Total" },
  zh: { charges: "费用", reserved: "预留覆盖", credits: "抵扣", total: "合计" },
};

/**
 * A job's cost cell: per currency its charges, the GPU time a reserved commitment covered (when
 * any), and when it has credits, the credits and the total billed (= the API's cost), each a line
 * of its own. The API's parts must add up: cost = charges + credits.
 */
async function costParts(page, metric, j, lang) {
  const blocks = [{ ...j }, ...(j.other_costs ?? [])];
  if (!check(blocks.every((p) => p.charges !== undefined && p.credits !== undefined && p.reserved_covered_value !== undefined),
    `cost-performance ${metric}: ${j.job}: the API gives charges, credits and reserved-covered value apart`)) return false;
  const label = COST_LABELS[lang];
  const nonZero = (x) => decimalCompare(x, "0") !== 0;
  const expected = blocks.flatMap((p) => [
    ["charges", `${label.charges} ${p.charges} ${p.currency}`],
    // Derived micro-exact: shown to the cent.
    ...(nonZero(p.reserved_covered_value) ? [["reserved", `${label.reserved} ${centsText(p.reserved_covered_value)} ${p.currency}`]] : []),
    ...(nonZero(p.credits) ? [["credits", `${label.credits} ${p.credits} ${p.currency}`], ["total", `${label.total} ${p.cost} ${p.currency}`]] : []),
  ]);
  const shown = await page.locator(`[data-testid="costperf-table-${metric}"] tr[data-row="${j.job_id}"] [data-testid="costperf-cost"] [data-part]`)
    .evaluateAll((els) => els.map((e) => [e.dataset.part, e.textContent.trim()]));
  const adds = blocks.every((p) => decimalCompare(decimalSum([p.charges, p.credits]), p.cost) === 0);
  return check(adds && JSON.stringify(shown) === JSON.stringify(expected),
    `cost-performance ${metric}: ${j.job}'s cost apart (${lang}): ${expected.map((e) => e[1]).join(" · ")}${adds ? "" : " (API: charges + credits ≠ cost)"}` +
    (JSON.stringify(shown) === JSON.stringify(expected) ? "" : ` (page: ${shown.map((e) => e[1]).join(" · ")})`));
}

async function supplierHealth(page) {
  const healthAnswer = page.waitForResponse((r) => r.url().includes("/api/v1/dashboard/suppliers"), { timeout: DASHBOARD_TIMEOUT_MS });
  await openView(page, "#/suppliers?days=7", "advise/suppliers", "POST");
  const response = await healthAnswer;
  const health = await response.json();
  check(response.status() === 200 && health.suppliers.length > 0, `supplier health: GET /dashboard/suppliers (HTTP ${response.status()}, ${health.suppliers?.length} suppliers)`);
  if (response.status() !== 200) return;
  // A supplier with no GPUs yet (made by the test) has no failure rate, availability or score:
  // its row says "—" and the view stands (a null failure rate once broke the whole view).
  check(health.suppliers.some((s) => s.failure_rate_bp === null), "supplier health: a supplier without GPUs is listed with a null failure rate");
  for (const s of health.suppliers) {
    const cells = await rowCells(page, "suppliers-health-table", s.supplier);
    const expected = [String(s.nodes), String(s.gpus), s.node_hours, String(s.incidents), bpText(s.failure_rate_bp),
      intText(s.restore_minutes), intText(s.response_minutes), permilleText(s.fp16_attainment_permille),
      permilleText(s.nccl_attainment_permille), s.availability_pct === null ? "—" : `${s.availability_pct}%`, s.score ?? "—", s.share_pct ?? "—"];
    check(JSON.stringify(cells.slice(1)) === JSON.stringify(expected),
      `supplier health ${s.supplier}: failure rate ${bpText(s.failure_rate_bp)} (${s.failure_rate_bp} bp), availability ${s.availability_pct}%, score ${s.score}, share ${s.share_pct}` +
      (JSON.stringify(cells.slice(1)) === JSON.stringify(expected) ? "" : ` (page: ${cells.slice(1).join(" | ")})`));
  }
  check((await page.locator('[data-testid="suppliers-incidents-chart"] svg').count()) === 1, "supplier health: incidents-per-day chart drawn");
  // The replayed days hold runpod-ustx3-h200-01's outage (DEMO_DAYS >= 2): it is counted, and
  // each supplier's days add up to its incidents.
  const total = health.suppliers.reduce((n, s) => n + s.incidents, 0);
  check(Number(process.env.DEMO_DAYS ?? 2) < 2 || health.suppliers.some((s) => s.supplier === "runpod" && s.incidents > 0 && s.response_minutes !== null),
    `supplier health: the demo's runpod outage is counted with its response time (${total} incident(s) in all)`);
  check(health.suppliers.every((s) => s.daily.reduce((n, d) => n + d.incidents, 0) === s.incidents), "supplier health: incidents per day add up to each supplier's count");
  await shot(page, "18-supplier-health");
}

// --- 简体中文 -------------------------------------------------------------------------

/**
 * Every header (th) and badge of the view on the page, measured character by character: a badge
 * must be one line; a header or a flag (a sentence in a badge) may wrap, but only at a space or
 * punctuation, never inside a word ("排/名", "生效/中" were the bugs). Returns how many were
 * measured and the broken ones.
 */
async function brokenLabels(page) {
  return page.locator("main th, main .badge").evaluateAll((els) => {
    const measured = els.filter((e) => e.getClientRects().length > 0);
    const broken = measured.map((e) => {
      const chars = []; // [index in the text, top, bottom] of each character with a box
      let text = "";
      const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (let i = 0; i < n.data.length; i++) {
          const r = document.createRange();
          r.setStart(n, i);
          r.setEnd(n, i + 1);
          const box = [...r.getClientRects()].find((b) => b.width > 0);
          if (box) chars.push([text.length + i, box.top, box.bottom]);
        }
        text += n.data;
      }
      const breaks = []; // a character whose box starts below the previous one's: a new line
      for (let i = 1; i < chars.length; i++) if (chars[i][1] >= chars[i - 1][2] - 1) breaks.push([chars[i - 1][0], chars[i][0]]);
      const sentence = e.tagName === "TH" || e.classList.contains("flag");
      const atGap = ([a, b]) => /[\s，。、；：！？,.;:!?）)（(]/.test(text.slice(a, b + 1));
      const wrong = sentence ? breaks.filter((x) => !atGap(x)) : breaks;
      return wrong.length === 0 ? null : `${text.trim()} (${breaks.length + 1} lines, broken at ${wrong.map(([a, b]) => `${text[a]}/${text[b]}`).join(" ")})`;
    }).filter(Boolean);
    return { measured: measured.length, broken };
  });
}

export async function unbroken(page, view) {
  const { measured, broken } = await brokenLabels(page);
  check(measured > 0 && broken.length === 0,
    `zh ${view}: none of ${measured} headers and badges breaks inside a word${broken.length ? `: ${broken.slice(0, 5).join("; ")}` : ""}`);
}

/** Every <time> on the page: in Chinese, in the browser's time zone (UTC+8), its UTC form on hover. */
export async function chineseTimes(page, view) {
  const times = await page.locator("main time").evaluateAll((els) => els.map((e) => [e.getAttribute("datetime"), e.textContent.trim(), e.title]));
  const wrong = times.filter(([at, text, title]) => !isChineseInstant(text, at) || title !== utcText(at));
  check(times.length > 0 && wrong.length === 0,
    `zh ${view}: ${times.length} times written like "${times[0]?.[1]}" (UTC+8; hover "${times[0]?.[2]}")${wrong.length ? `; wrong: ${JSON.stringify(wrong.slice(0, 3))}` : ""}`);
}

/** The period sentence atop a view: Chinese dates, the UTC range on hover. */
async function chinesePeriod(page, testid, from, to) {
  const note = page.getByTestId(testid);
  const [text, title] = [await cellText(note), await note.getAttribute("title")];
  const dates = text.match(/\d{4}年\d{1,2}月\d{1,2}日 \d{2}:\d{2}/g) ?? [];
  check(dates.length === 2 && isChineseInstant(dates[0], from) && isChineseInstant(dates[1], to) && title === `${utcText(from)} – ${utcText(to)}`,
    `zh ${testid}: "${text}" (hover "${title}")`);
}

/**
 * The cost-performance view with its jobs that have SLA credits. A longer demo replay has some (its
 * FP16 shortfall on a Lambda H100 refunds the sweeps placed there); otherwise the test records an
 * incident on the node of a running job the view lists, over the last minutes of its run, as a
 * supplier would: its contract credits 200% of the interrupted time (billing.md sla_outage).
 */
async function creditedJobs(page, base, token) {
  const withCredits = (cp) => (cp.json.jobs ?? []).filter((j) => j.credits !== undefined && decimalCompare(j.credits, "0") !== 0);
  let cp = await openView(page, "#/costperf?days=7&r=zh", "dashboard/cost-performance");
  if (cp.status !== 200 || withCredits(cp).length > 0) return { cp, credited: cp.status === 200 ? withCredits(cp) : [] };
  const running = (await api(base, token, "GET", "jobs?state=running&limit=1000")).json.items;
  const open = (await api(base, token, "GET", "allocations?state=open&limit=1000")).json.items;
  for (const j of cp.json.jobs) {
    const job = running.find((r) => r.id === j.job_id && r.status.placement.length > 0);
    const run = job && open.find((a) => a.job_id === job.id && a.running_at);
    if (!run) continue;
    const to = Date.now() - 1000;
    const from = Math.max(Date.parse(run.running_at) + 1000, to - 30 * 60_000);
    if (to - from < 10_000) continue;
    const incident = await api(base, token, "POST", "measurements", {
      kind: "incident", node: job.status.placement[0].node, from: new Date(from).toISOString(), to: new Date(to).toISOString(),
      note: "browser test: node unreachable",
    });
    check(incident.status === 201, `an incident recorded on ${job.name}'s node over its last ${Math.round((to - from) / 60_000)} min (HTTP ${incident.status})`);
    cp = await openView(page, `#/costperf?days=7&r=zh-${j.job_id}`, "dashboard/cost-performance");
    if (cp.status !== 200 || withCredits(cp).length > 0) break;
  }
  return { cp, credited: cp.status === 200 ? withCredits(cp) : [] };
}

export async function chineseDashboard(page, base, token) {
  await page.getByTestId("lang-select").selectOption("zh-CN");

  // Queue & jobs: times in Chinese and UTC+8; a job's update time against the API.
  const jobs = await openView(page, "#/jobs?r=zh", "jobs?updated_since=");  // the finished jobs it reads
  await chineseTimes(page, "jobs");
  const done = jobs.json.items.find((j) => !["pending", "admitted", "running"].includes(j.status.state)) ?? jobs.json.items.find((j) => j.status.state === "pending");
  if (done) {
    const time = page.locator(`main tr[data-row="${done.name}"] time`).last();
    const text = await cellText(time);
    check(isChineseInstant(text, done.status.updated_at) && (await time.getAttribute("title")) === utcText(done.status.updated_at),
      `zh jobs: ${done.name} updated "${text}" = ${done.status.updated_at} in UTC+8`);
  }
  await unbroken(page, "jobs");
  await shot(page, "24-jobs-zh-dates");

  // Invoices: the month picker and the month heading in Chinese (the browser's locale is not),
  // and picking another month reads that month's invoice.
  const month = new Date().toISOString().slice(0, 7);
  const [year, mon] = month.split("-").map(Number);
  const invoice = await openView(page, `#/invoices?tenant=aurora-ai&month=${month}`, "invoices");
  // Every line's kind and rule named in Chinese; the API's rule stays in data-rule.
  const CJK = /[\u4e00-\u9fff]/;
  for (const [i, s] of invoice.json.sections.entries()) {
    const rows = await page.locator(`[data-testid="invoice-lines-${i}"] tbody tr`).evaluateAll((trs) =>
      trs.map((tr) => ({ kind: tr.cells[0].textContent, rule: tr.cells[1].textContent, id: tr.cells[1].querySelector("[data-rule]")?.getAttribute("data-rule"),
        description: tr.cells[2].textContent })));
    check(rows.length === s.lines.length && rows.every((r, j) => r.id === s.lines[j].rule && CJK.test(r.rule) && CJK.test(r.kind) && CJK.test(r.description)),
      `zh invoices: section ${s.contract}: all ${s.lines.length} lines' kinds, rules and descriptions in Chinese (${rows.slice(0, 2).map((r) => `${r.kind} ${r.rule} ${r.description}`).join("、")}…)`);
  }
  const months = await page.locator('[data-testid="invoice-month-month"] option').allInnerTexts();
  const years = await page.locator('[data-testid="invoice-month-year"] option').allInnerTexts();
  const ZH_MONTH = /^(一|二|三|四|五|六|七|八|九|十|十一|十二)月$/;
  const ENGLISH = /january|february|march|april|may|june|july|august|september|october|november|december|janvier|décembre/i;
  check(months.length === 12 && months.every((m) => ZH_MONTH.test(m)) && months[0] === "一月" && months[11] === "十二月"
    && years.length > 0 && years.every((y) => /^\d{4}年$/.test(y)) && !months.some((m) => ENGLISH.test(m)),
    `zh invoices: the month picker names months in Chinese (${months.slice(0, 3).join("、")}…; years ${years.slice(0, 2).join("、")}…)`);
  const title = await cellText(page.getByTestId("invoice-title"));
  check(title === `aurora-ai · ${year}年${mon}月`, `zh invoices: the month heading reads "${title}"`);
  const period = await cellText(page.getByTestId("invoice-period"));
  check((period.match(/\d{4}年\d{1,2}月\d{1,2}日 \d{2}:\d{2}/g) ?? []).length === 3 && (await page.getByTestId("invoice-period").getAttribute("title")).includes("UTC"),
    `zh invoices: the period in Chinese dates ("${period}")`);
  await unbroken(page, "invoices");
  await shot(page, "25-invoices-zh-month");
  const previous = mon === 1 ? `${year - 1}-12` : `${year}-${String(mon - 1).padStart(2, "0")}`;
  await page.getByTestId("invoice-month-year").selectOption(previous.slice(0, 4));
  await page.getByTestId("invoice-month-month").selectOption(previous.slice(5));
  const answer = page.waitForResponse((r) => r.url().includes("/api/v1/invoices?"), { timeout: DASHBOARD_TIMEOUT_MS });
  await page.locator('main form button[type="submit"]').click();
  const picked = new URL((await answer).url()).searchParams.get("month");
  await page.locator('main[data-testid="view-invoices"]:not([data-loading])').waitFor({ timeout: DASHBOARD_TIMEOUT_MS });
  await page.getByTestId("invoice-title").waitFor({ timeout: DASHBOARD_TIMEOUT_MS });
  const [py, pm] = previous.split("-").map(Number);
  check(picked === previous && (await cellText(page.getByTestId("invoice-title"))) === `aurora-ai · ${py}年${pm}月`,
    `zh invoices: picking ${py}年 ${months[pm - 1]} reads month=${picked}`);

  // Alerts: times, figures and the Chinese labels in one line.
  const alerts = await openView(page, "#/alerts?r=zh", "alerts");
  if (alerts.json.items.length > 0) await chineseTimes(page, "alerts");
  await unbroken(page, "alerts");
  await shot(page, "26-alerts-zh");

  // Costs, utilization, suppliers: period sentences in Chinese dates; headers unbroken.
  const costs = await openView(page, "#/costs?days=7&r=zh", "dashboard/costs");
  if (costs.status === 200) await chinesePeriod(page, "costs-period", costs.json.from, costs.json.to);
  await unbroken(page, "costs");
  const util = await openView(page, "#/utilization?days=7&r=zh", "dashboard/utilization");
  if (util.status === 200) await chinesePeriod(page, "util-period", util.json.from, util.json.to);
  await unbroken(page, "utilization");
  await openView(page, "#/offers?r=zh", "offers");
  await unbroken(page, "offers");
  // A proxy's page instead of the API's answer (a 502 in HTML) is said in Chinese; the protocol's
  // own words (English) only in brackets.
  await page.route("**/api/v1/offers**", (route) => route.fulfill({ status: 502, contentType: "text/html", body: "<html><body>Bad Gateway</body></html>" }));
  await page.evaluate(() => { location.hash = "#/offers?r=zh502"; });
  await page.locator('main[data-testid="view-offers"]:not([data-loading]) [data-testid="view-error"]').waitFor({ timeout: DASHBOARD_TIMEOUT_MS });
  const proxied = await cellText(page.getByTestId("view-error"));
  check(proxied.startsWith("错误 502：该应答并非来自 gpurent 的 API") && proxied.endsWith("(Bad Gateway)"), `zh: a proxy's 502 page reads "${proxied}"`);
  await page.unroute("**/api/v1/offers**");
  await openView(page, "#/suppliers?days=7&r=zh", "advise/suppliers", "POST");
  await unbroken(page, "suppliers");

  // Cost-performance: unbroken headers, and a job with SLA credits shows its charges, the
  // credits and the total apart.
  const { cp, credited } = await creditedJobs(page, base, token);
  if (cp.status === 200) await chinesePeriod(page, "costperf-period", cp.json.from, cp.json.to);
  await unbroken(page, "cost-performance");
  if (check(credited.length > 0, `zh cost-performance: jobs with SLA credits (${credited.map((j) => `${j.job} ${j.credits} ${j.currency}`).join(", ") || "none"})`)) {
    for (const j of credited.slice(0, 5)) await costParts(page, j.metric, j, "zh");
    const legend = await cellText(page.getByTestId("costperf-legend"));
    check(legend.includes("抵扣") && legend.includes("合计"), "zh cost-performance: the legend says what charges, credits and the total are");
  }
  await shot(page, "27-costperf-zh-credits");
  await page.getByTestId("lang-select").selectOption("en");
  await page.locator('main[data-testid="view-costperf"]:not([data-loading])').waitFor({ timeout: DASHBOARD_TIMEOUT_MS });
}

// --- tenant ---------------------------------------------------------------------------

export async function tenantDashboard(page, base, adminToken, tenantToken, qingyun, shared) {
  const projects = (await api(base, adminToken, "GET", "projects?limit=1000")).json.items;
  const own = new Set(projects.filter((p) => p.tenant_id === qingyun.id).map((p) => p.name));
  const others = projects.filter((p) => p.tenant_id !== qingyun.id && !own.has(p.name)).map((p) => p.name);
  const wordIn = (text, word) => new RegExp(`(^|[^\\w-])${word}([^\\w-]|$)`).test(text);

  const util = await openView(page, "#/utilization?days=7", "dashboard/utilization");
  check(util.status === 200 && util.json.cards.length > 0 && util.json.cards.every((c) => c.projects.length > 0 && c.projects.every((p) => own.has(p))),
    `tenant utilization: ${util.json.cards?.length} cards, all ran only qingyun-tech's projects`);
  const projectOptions = (await texts(page.locator('[data-testid="filter-project"] option'))).slice(1);
  check(projectOptions.length === own.size && projectOptions.every((p) => own.has(p)) && (await page.getByTestId("filter-tenant").count()) === 0,
    `tenant utilization: project choices are its own (${projectOptions.join(", ")}), no tenant choice`);
  const otherUtil = await api(base, tenantToken, "GET", "dashboard/utilization?tenant=aurora-ai");
  check(otherUtil.status === 404, `tenant asking for aurora-ai's utilization: HTTP ${otherUtil.status}`);
  await shot(page, "19-tenant-utilization");

  const costs = await openView(page, "#/costs?days=7", "dashboard/costs");
  const mainText = await cellText(page.locator("main"));
  check(costs.status === 200 && costs.json.tenants.length > 0 && costs.json.tenants.every((x) => x.tenant_id === qingyun.id),
    `tenant costs: only qingyun-tech's (${costs.json.tenants?.map((x) => `${x.tenant} ${x.currency}`).join(", ")})`);
  check(!wordIn(mainText, "aurora-ai") && others.every((p) => !wordIn(mainText, p)), "tenant costs: no other tenant's name or project on the page");
  const refused = await openView(page, "#/costs?days=7&tenant=aurora-ai", "dashboard/costs");
  check(refused.status === 404 && (await cellText(page.getByTestId("view-error"))).includes("404"), `tenant costs for aurora-ai: HTTP ${refused.status}, refusal shown`);
  for (const route of ["dashboard/costs?tenant=aurora-ai", "dashboard/cost-performance?tenant=aurora-ai"]) {
    const direct = await api(base, tenantToken, "GET", route);
    check(direct.status === 404, `API refuses ${route} to the tenant token (HTTP ${direct.status})`);
  }
  const cp = await openView(page, "#/costperf?days=7", "dashboard/cost-performance");
  check(cp.status === 200 && cp.json.jobs.length > 0 && cp.json.jobs.every((j) => own.has(j.project)), `tenant cost-performance: ${cp.json.jobs?.length} jobs, all its own projects'`);
  await shot(page, "22-tenant-costperf");

  const freeze = shared.freeze;
  if (!freeze) return;
  // A member sees the freeze but is not offered Lift (the server would refuse it: 403).
  await logout(page);
  const member = await api(base, adminToken, "POST", "tokens", { user: "qingyun-dev", name: "browser-member" });
  check(member.status === 201, `mint a tenant_member token for qingyun-dev (HTTP ${member.status})`);
  await login(page, member.json.token);
  await openView(page, "#/costs?days=7", "dashboard/costs");
  check(await page.getByTestId(`costs-frozen-badge-${freeze.id}`).isVisible()
    && (await page.getByTestId(`alert-lift-${freeze.id}`).count()) === 0
    && (await cellText(page.getByTestId(`costs-frozen-${freeze.id}`))).includes("admin"),
    "tenant member: sees EGRESS FROZEN, is told to ask an admin, no Lift");
  const memberLift = await api(base, member.json.token, "POST", `alerts/${freeze.id}/lift`);
  check(memberLift.status === 403, `API refuses Lift to the member (HTTP ${memberLift.status})`);
  await logout(page);

  // The tenant's admin lifts it from the costs view; the alerts view offers it Lift too.
  await login(page, tenantToken);
  const alerts = await openView(page, "#/alerts", "alerts");
  const headers = await texts(page.locator('[data-testid="alerts-table"] thead th'));
  check(alerts.json.items.some((a) => a.id === freeze.id) && headers.includes("Action") && (await page.getByTestId(`alert-lift-${freeze.id}`).count()) === 1,
    "tenant admin: the alerts view offers Lift on its freeze");
  await openView(page, "#/costs?days=7", "dashboard/costs");
  await shot(page, "20-tenant-costs-frozen");
  const lifted = page.waitForResponse((r) => r.url().includes(`/api/v1/alerts/${freeze.id}/lift`), { timeout: DASHBOARD_TIMEOUT_MS });
  const reread = page.waitForResponse((r) => r.url().includes("/api/v1/dashboard/costs"), { timeout: DASHBOARD_TIMEOUT_MS });
  await page.locator(`[data-testid="costs-frozen-${freeze.id}"] [data-testid="alert-lift-${freeze.id}"]`).click();
  check((await lifted).status() === 200, "tenant admin: Lift answered 200");
  const after = await (await reread).json();
  await page.getByTestId(`costs-frozen-badge-${freeze.id}`).waitFor({ state: "detached", timeout: DASHBOARD_TIMEOUT_MS });
  const state = (await api(base, adminToken, "GET", `alerts/${freeze.id}`)).json.state;
  const listed = after.tenants.flatMap((x) => x.alerts).find((a) => a.id === freeze.id);
  check(state === "lifted" && listed?.state === "lifted", `after Lift: the API says ${state}, the costs answer ${listed?.state}; badge gone`);
  await shot(page, "21-tenant-costs-lifted");
}
