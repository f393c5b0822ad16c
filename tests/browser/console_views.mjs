// browser_dashboard, part three: the tenant's console. Instances created, stopped, started and
// released from the page (and then read-only, its name free), in English and in 简体中文, with what the page shows (state, cost per
// hour, what the starts cost so far, utilization, access) checked against the API's own answers;
// a refused form naming its field; the job form; the roles (a viewer reads and has no buttons; promoted, the same token gets them);
// and one tenant never seeing another's instances, while the operator sees both.

import { api, cellText, centsText, check, decimalSum, login, logout, openView, shot, sleep, STEP_TIMEOUT_MS } from "./helpers.mjs";

const row = (page, name) => page.locator(`[data-testid="instances-table"] tr[data-row="${name}"]`);
const inRow = (page, name, testid) => row(page, name).getByTestId(testid);

/** The instance once `ok` holds for its API answer (polled; the scheduler and executor take a moment). */
async function instanceWhen(base, token, name, ok, what) {
  let last;
  for (let i = 0; i < 150; i++) {
    last = await api(base, token, "GET", `instances/${name}`);
    if (last.status === 200 && ok(last.json)) return last.json;
    await sleep(100);
  }
  throw new Error(`instance ${name} never got ${what}: ${JSON.stringify(last?.json)}`);
}

/** What the page must show as the starts' cost so far: the sum of its jobs' totals, per currency, at cents. */
async function costSoFar(base, token, instance) {
  const per = new Map();
  for (const id of instance.job_ids) {
    const cost = (await api(base, token, "GET", `jobs/${id}/cost`)).json;
    for (const [cur, c] of Object.entries(cost.costs)) per.set(cur, [...(per.get(cur) ?? []), c.total]);
  }
  return [...per.entries()].sort().map(([cur, totals]) => `${centsText(decimalSum(totals))} ${cur}`).join(" + ");
}

/** A per-hour price as the page writes it: exact, no zeros past the cents. */
const perHour = (amount, currency, unit) => `${amount.includes(".") ? amount.replace(/0+$/, "").replace(/\.(\d?)$/, (_, d) => `.${d.padEnd(2, "0")}`) : amount} ${currency}${unit}`;

/** Waits until the row shows `state` (the page reads the list again by itself while one starts). */
async function rowState(page, name, state) {
  await page.locator(`[data-testid="instances-table"] tr[data-row="${name}"] [data-testid="instance-state"][data-state="${state}"]`)
    .waitFor({ timeout: STEP_TIMEOUT_MS });
}

async function costCell(page, name) {
  const cell = page.locator(`[data-testid="instances-table"] tr[data-row="${name}"] [data-testid="instance-cost-so-far"][data-loaded]`);
  await cell.waitFor({ timeout: STEP_TIMEOUT_MS });
  return cellText(cell);
}

export async function instanceConsole(page, base, adminToken, tenantToken, qingyun) {
  const tenants = (await api(base, adminToken, "GET", "tenants")).json.items;
  const aurora = tenants.find((x) => x.name === "aurora-ai");
  // Another tenant's instance, which the tenant's console must never show.
  const auroraProject = (await api(base, adminToken, "GET", "projects?limit=1000")).json.items.find((p) => p.tenant_id === aurora.id && p.name === "vision"); // it has H100 quota
  const theirs = await api(base, adminToken, "POST", "instances",
    { name: "aurora-secret-box", project: auroraProject.id, gpus: 1, gpu_model: "h100-sxm5-80gb", image: "nvcr.io/nvidia/pytorch:24.05-py3" });
  check(theirs.status === 201 && theirs.json.tenant_id === aurora.id, `aurora-ai's instance created through the API (HTTP ${theirs.status}${theirs.status === 201 ? "" : `: ${JSON.stringify(theirs.json?.errors ?? theirs.json?.detail)}`})`);

  // 1. The tenant's admin: its instances only, each as the API answers it.
  // Signed in as the tenant's admin since the tenant views (part two).
  const listed = await openView(page, "#/instances", "instances");
  const own = listed.json.items;
  check(own.length > 0 && own.every((i) => i.tenant_id === qingyun.id), `tenant's instance list holds only its own (${own.map((i) => i.name).join(", ")})`);
  const mainText = await cellText(page.locator("main"));
  check(!mainText.includes("aurora-secret-box"), "instances view: another tenant's instance never appears");
  const theirsDirect = await api(base, tenantToken, "GET", "instances/aurora-secret-box");
  check(theirsDirect.status === 404, `API: another tenant's instance is 404 to the tenant (HTTP ${theirsDirect.status})`);
  // 2. A refused form names its field; then a real instance from the form.
  const form = page.getByTestId("instance-form");
  await form.getByTestId("instance-name").fill("Bad Name");
  await form.getByTestId("instance-create").click();
  const refused = page.locator('[data-testid="instance-error"] li[data-field="name"]');
  await refused.waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await cellText(refused)).startsWith("name:"), `a bad name is refused naming the field: "${await cellText(refused)}"`);

  // A project of its own (the demo's have their quotas taken or their egress frozen by now);
  // only the CNY supplier sells Ascend, so the CNY tenant's instance is billed in its currency.
  const madeProject = await api(base, tenantToken, "POST", "projects", { name: "console", quota: { gpus_per_model: { "ascend-910b-64gb": 16 } } });
  check(madeProject.status === 201, `the tenant's admin makes a project for the console (HTTP ${madeProject.status})`);
  const project = madeProject.json;
  await openView(page, "#/instances?r=0", "instances"); // the form lists the new project
  await form.getByTestId("instance-name").fill("browser-box");
  await form.getByTestId("instance-project").selectOption(project.id);
  await form.getByTestId("instance-gpus").fill("1");
  await form.getByTestId("instance-model").selectOption("ascend-910b-64gb");
  await form.getByTestId("instance-image").fill("nvcr.io/nvidia/pytorch:24.05-py3");
  // A data disk of its own, made with it from the form (a data disk is one instance's alone: the
  // demo's dev-box holds its own).
  check(await form.getByTestId("instance-new-disk").isHidden(), "the new disk's fields show only when asked for");
  await form.getByTestId("instance-volume").selectOption({ label: "a new disk…" });
  await form.getByTestId("instance-new-disk-name").fill("console-disk");
  await form.getByTestId("instance-new-disk-size").fill("20");
  await form.getByTestId("instance-ssh-keys").fill("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIgSxaQ2Qz1gDd7Y9wF6Zr1i4e0bqKk2yG0o3b4c5d6e browser@test");
  await form.getByTestId("instance-notebook-on").check();
  await form.getByTestId("instance-stop-after").fill("120");
  await form.getByTestId("instance-create").click();
  await page.getByTestId("instance-done").waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await cellText(page.getByTestId("instance-done"))).includes("browser-box"), "create: the page says browser-box was created");
  const created = await instanceWhen(base, tenantToken, "browser-box", (i) => i.state === "running", "running");
  check(created.project_id === project.id && created.gpus === 1 && created.gpu_model === "ascend-910b-64gb" && created.notebook === true
    && created.ssh_keys.length === 1 && created.stop_after_minutes === 120 && created.volume?.name === "console-disk"
    && created.volume?.size_gb === 20,
    `the form's fields reached the API (${JSON.stringify({ project: created.project_id, gpus: created.gpus, model: created.gpu_model, volume: created.volume })})`);
  await rowState(page, "browser-box", "running");
  check(true, "create: the row reaches running without reloading the page");
  const disk = await api(base, tenantToken, "GET", "volumes/console-disk");
  check(disk.status === 200 && disk.json.size_gb === 20, `the form made the 20 GB data disk with the instance (HTTP ${disk.status}, ${disk.json.size_gb} GB)`);
  check((await cellText(inRow(page, "browser-box", "instance-volumes"))).includes("console-disk (20 GB)"), "the row shows the disk and its size");
  // Its GPU's utilization, as an agent on the node reports it, shown as the API answers it.
  const job = (await api(base, tenantToken, "GET", `jobs/${created.current_job.id}`)).json;
  const sampled = await api(base, adminToken, "POST", "usage", {
    idempotency_key: "browser-console-util",
    gpu_samples: [{ at: new Date().toISOString(), node: job.status.placement[0].node, gpu: job.status.placement[0].gpus[0], utilization_pct: 37 }],
  });
  check(sampled.status < 300, `a utilization reading of 37% for browser-box's GPU (HTTP ${sampled.status})`);
  await openView(page, "#/instances?r=1", "instances");
  const running = (await api(base, tenantToken, "GET", "instances/browser-box")).json;
  const util = await cellText(inRow(page, "browser-box", "instance-utilization"));
  check(running.utilization?.percent === 37 && util.startsWith("37%"), `browser-box: utilization "${util}" (API ${JSON.stringify(running.utilization)})`);
  const runCost = await cellText(inRow(page, "browser-box", "instance-cost-running"));
  check(running.cost_per_hour.running !== null && runCost === perHour(running.cost_per_hour.running, running.cost_per_hour.currency, "/h"),
    `browser-box: running cost per hour "${runCost}" (API ${running.cost_per_hour.running} ${running.cost_per_hour.currency})`);
  // The demo runs no containers: the page says so instead of an SSH command that leads nowhere.
  check((await cellText(inRow(page, "browser-box", "instance-access-none"))) === "not reachable: this server runs no containers" && running.access === null,
    "access: the page says the server runs no containers (the API's access is null)");
  check((await inRow(page, "browser-box", "instance-stops-at").count()) === 1, "the timer's stop time is shown");
  await shot(page, "24-console-instances");

  // 3. Stop: stopped, why, and what its start cost, exactly as the API rates it.
  await inRow(page, "browser-box", "instance-stop").click();
  await rowState(page, "browser-box", "stopped");
  const stopped = await instanceWhen(base, tenantToken, "browser-box", (i) => i.state === "stopped", "stopped");
  const reason = await cellText(inRow(page, "browser-box", "instance-reason"));
  check(reason === stopped.stop_reason && reason !== "", `stop: the reason reads as the API's: "${reason}"`);
  const soFar = await costCell(page, "browser-box");
  const want = await costSoFar(base, tenantToken, stopped);
  check(soFar === want && /^\d+\.\d\d CNY$/.test(soFar), `stop: the starts' cost so far "${soFar}" equals its job's rated cost (${want})`);
  check((await cellText(inRow(page, "browser-box", "instance-cost-running"))) === "—", "stopped: no running price");

  // 4. Start again while its host is full: the page says so before anything is billed and offers
  // the ways on; "On another host" runs it elsewhere.
  const pf = (await api(base, tenantToken, "GET", "instances/browser-box/preflight")).json;
  check(pf.host?.node && pf.host_free === true, `preflight: its host ${pf.host?.name} has ${pf.host?.free_gpus} GPUs free`);
  const filler = await api(base, tenantToken, "POST", "jobs", {
    name: "browser-filler", project: project.id, kind: "batch", workers: 1, gpus_per_worker: pf.host.free_gpus,
    constraints: { gpu_models: ["ascend-910b-64gb"], nodes: [pf.host.name] }, image: "busybox:1.36", command: ["true"], expected_duration_seconds: 3600,
  });
  check(filler.status === 201, `a job of the tenant's fills the host's ${pf.host.free_gpus} free GPUs (HTTP ${filler.status})`);
  for (let i = 0; i < 150 && (await api(base, tenantToken, "GET", `jobs/${filler.json.id}`)).json.status.state !== "running"; i++) await sleep(100);
  await inRow(page, "browser-box", "instance-start").click();
  await page.getByTestId("instance-start-options").waitFor({ timeout: STEP_TIMEOUT_MS });
  const busy = await cellText(page.getByTestId("instance-error"));
  check(busy.includes(pf.host.name) && busy.includes("409"), `start on a full host: refused naming it: "${busy.split("\n")[0]}"`);
  check((await api(base, tenantToken, "GET", "instances/browser-box")).json.job_ids.length === 1, "refused before anything was submitted");
  await page.getByTestId("instance-start-any_host").click();
  await rowState(page, "browser-box", "running");
  const restarted = await instanceWhen(base, tenantToken, "browser-box", (i) => i.state === "running", "running again");
  const movedTo = (await api(base, tenantToken, "GET", `jobs/${restarted.current_job.id}`)).json.status.placement[0].node;
  check(restarted.job_ids.length === 2 && movedTo !== pf.host.node, `"On another host": a second start, on another node (${movedTo})`);
  await api(base, tenantToken, "POST", `jobs/${filler.json.id}/cancel`);

  // Restart: one click stops and starts it in one write (a third job; the second's reason says who).
  await inRow(page, "browser-box", "instance-restart").click();
  const thrice = await instanceWhen(base, tenantToken, "browser-box", (i) => i.state === "running" && i.job_ids.length === 3, "restarted");
  const before = (await api(base, tenantToken, "GET", `jobs/${restarted.current_job.id}`)).json.status;
  check(thrice.job_ids.length === 3 && before.state === "cancelled" && /restarted by/.test(before.reason),
    `restart: a new job, the old one cancelled as "${before.reason}"`);
  await rowState(page, "browser-box", "running");

  // 5. In 简体中文: the same console, the states and buttons translated, the server's reasons too.
  await page.getByTestId("lang-select").selectOption("zh-CN");
  await openView(page, "#/instances?lang=zh", "instances");
  check((await cellText(page.getByTestId("nav-instances"))) === "实例", "zh: nav reads 实例");
  check((await cellText(inRow(page, "browser-box", "instance-state"))) === "运行中", "zh: the state reads 运行中");
  check((await cellText(inRow(page, "browser-box", "instance-stop"))) === "停止", "zh: the stop button reads 停止");
  check((await cellText(inRow(page, "browser-box", "instance-restart"))) === "重启", "zh: the restart button reads 重启");
  check((await cellText(inRow(page, "browser-box", "instance-access-none"))) === "无法访问：此服务器不运行容器", "zh: the access note is Chinese");
  const zhRun = await cellText(inRow(page, "browser-box", "instance-cost-running"));
  check(zhRun === perHour(restarted.cost_per_hour.running, restarted.cost_per_hour.currency, "/小时"), `zh: running cost per hour "${zhRun}"`);
  await inRow(page, "browser-box", "instance-stop").click();
  await rowState(page, "browser-box", "stopped");
  const stoppedZh = await cellText(inRow(page, "browser-box", "instance-reason"));
  const apiZh = (await api(base, tenantToken, "GET", "instances/browser-box?lang=zh")).json.stop_reason;
  check(stoppedZh === apiZh && /[\u4e00-\u9fff]/.test(stoppedZh), `zh: the stop reason as the API renders it in zh: "${stoppedZh}"`);
  await shot(page, "25-console-instances-zh");
  await page.getByTestId("lang-select").selectOption("en");

  // 6. Release (confirmed): the row reads released, with no action left; its name is free (the API
  // finds it by id only); its volume stays.
  await openView(page, "#/instances?r=2", "instances");
  const boxId = (await api(base, tenantToken, "GET", "instances/browser-box")).json.id;
  page.once("dialog", (d) => void d.accept());
  await inRow(page, "browser-box", "instance-release").click();
  await page.getByTestId("instance-done").waitFor({ timeout: STEP_TIMEOUT_MS });
  await rowState(page, "browser-box", "released");
  check((await row(page, "browser-box").locator("button").count()) === 0, "release: the released row offers no action");
  check((await cellText(inRow(page, "browser-box", "instance-reason"))).includes("released by"), "release: the row says who released it");
  check((await api(base, tenantToken, "GET", "instances/browser-box")).status === 404, "release: its name no longer finds it");
  const gone = await api(base, tenantToken, "GET", `instances/${boxId}`);
  check(gone.status === 200 && gone.json.state === "released" && gone.json.released_at, `release: by id it reads released (${gone.json.state})`);
  check((await api(base, tenantToken, "GET", "volumes/console-disk")).status === 200, "release: the volume stays");

  // 7. A member submits a job from the form (and is told which field is wrong first).
  await logout(page);
  const member = await api(base, adminToken, "POST", "tokens", { user: "qingyun-dev", name: "browser-console-member" });
  await login(page, member.json.token);
  await openView(page, "#/jobs?r=5", "jobs");
  await page.getByTestId("job-submit-section").locator("summary").click();
  const jobForm = page.getByTestId("job-form");
  await jobForm.getByTestId("job-name").fill("browser-form-job");
  await jobForm.getByTestId("job-project").selectOption(project.id);
  await jobForm.getByTestId("job-workers").fill("0");
  await jobForm.getByTestId("job-submit").click();
  const badWorkers = page.locator('[data-testid="job-submit-error"] li[data-field="workers"]');
  await badWorkers.waitFor({ timeout: STEP_TIMEOUT_MS });
  check(true, `job form: workers 0 refused naming the field: "${await cellText(badWorkers)}"`);
  await jobForm.getByTestId("job-workers").fill("1");
  await jobForm.getByTestId("job-gpus").fill("1");
  await jobForm.getByTestId("job-model").selectOption("ascend-910b-64gb");
  await jobForm.getByTestId("job-image").fill("busybox:1.36");
  await jobForm.getByTestId("job-command").fill("sh\n-c\necho hello world");
  await jobForm.getByTestId("job-hours").fill("2");
  const reread = page.waitForResponse((r) => r.url().includes("/api/v1/jobs?") && r.request().method() === "GET", { timeout: STEP_TIMEOUT_MS });
  await jobForm.getByTestId("job-submit").click();
  await reread;
  await page.getByTestId("job-submitted").waitFor({ timeout: STEP_TIMEOUT_MS });
  const formJob = (await api(base, member.json.token, "GET", "jobs/browser-form-job")).json;
  check(formJob.kind === "training" && formJob.workers === 1 && formJob.gpus_per_worker === 1 && JSON.stringify(formJob.command) === JSON.stringify(["sh", "-c", "echo hello world"])
    && formJob.expected_duration_seconds === 7200 && JSON.stringify(formJob.constraints?.gpu_models) === JSON.stringify(["ascend-910b-64gb"]),
    `job form: the job as typed (${JSON.stringify({ kind: formJob.kind, command: formJob.command, gpu_models: formJob.constraints?.gpu_models })})`);
  await page.locator(`main[data-testid="view-jobs"]:not([data-loading])`).waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await page.locator('tr[data-row="browser-form-job"]').count()) === 1, "job form: the queue lists the submitted job");
  await shot(page, "26-console-job-form");
  // A link that names no job of the list says nothing was submitted (no text of the link's choosing).
  await openView(page, "#/jobs?submitted=Your%20account%20is%20locked", "jobs");
  check((await page.getByTestId("job-submitted").count()) === 0, "job form: ?submitted= naming no listed job shows no notice");

  // 8. A viewer reads the console: no form, no buttons.
  await logout(page);
  const viewer = await api(base, adminToken, "POST", "tokens", { user: "qingyun-audit", name: "browser-console-viewer" });
  await login(page, viewer.json.token);
  const seen = await openView(page, "#/instances?r=3", "instances");
  check(seen.json.items.length > 0 && (await page.locator('[data-testid="instances-table"] tbody tr').count()) === seen.json.items.length,
    `viewer: reads the instances (${seen.json.items.length})`);
  check((await page.getByTestId("instance-form").count()) === 0 && (await page.locator('[data-testid="instances-table"] button').count()) === 0
    && (await page.getByTestId("instances-read-only").count()) === 1, "viewer: no create form, no start/stop/release buttons, told why");
  await openView(page, "#/jobs?r=6", "jobs");
  check((await page.getByTestId("job-form").count()) === 0, "viewer: no job form");
  // Promoted to member, the same token (minted as a viewer's) gets the job form: the dashboard
  // takes the role from GET /me, as the server acts, not from the token's role at minting. Then back.
  const audit = await api(base, adminToken, "GET", "users/qingyun-audit");
  const promoted = await api(base, adminToken, "PUT", `users/${audit.json.id}`, { ...audit.json, role: "tenant_member" });
  check(promoted.status === 200, `viewer promoted to member (${promoted.status})`);
  await logout(page);
  await login(page, viewer.json.token);
  await openView(page, "#/jobs?r=7", "jobs");
  check((await page.getByTestId("job-form").count()) === 1, "promoted viewer: the job form, with the token it had as a viewer");
  const restored = await api(base, adminToken, "PUT", `users/${audit.json.id}`, { ...promoted.json, role: "viewer" });
  check(restored.status === 200, `member made a viewer again (${restored.status})`);

  // 9. The operator sees every tenant's instances, each with its tenant.
  await logout(page);
  await login(page, adminToken);
  const all = await openView(page, "#/instances?r=4", "instances");
  const tenantsShown = await page.locator('[data-testid="instances-table"] tbody tr td:nth-child(2)').allInnerTexts();
  check(all.json.items.some((i) => i.name === "aurora-secret-box") && tenantsShown.includes("aurora-ai") && tenantsShown.includes("qingyun-tech"),
    `operator: both tenants' instances (${[...new Set(tenantsShown)].join(", ")})`);
  await api(base, adminToken, "DELETE", `instances/${theirs.json.id}`);
}
