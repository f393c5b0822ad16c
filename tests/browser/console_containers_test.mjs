#!/usr/bin/env node
// browser_console_containers: the tenant's console in headless Chromium against a server that runs
// real containers (`gpurent serve --executor local --containers`, Podman on this machine, the
// test image scripts/debian-image builds): an instance created from the form reaches running, the
// page shows the SSH command and the notebook link exactly as the API gives them, a real `ssh`
// client logs in with that very command and the link opens the notebook, Save image saves it, the same in 简体中文, and Stop from the page ends the
// session. (browser_dashboard checks the rest of the console against the demo, which runs no
// containers.)
// Usage: node tests/browser/console_containers_test.mjs /path/to/gpurent
// Exit status 0 when every check passes, 1 otherwise, 77 (skipped) without root, Podman, the
// OpenSSH client or (to build the image) the Debian archive.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { api, artifacts, cellText, check, login, openView, runOnPage, shot, sleep, STEP_TIMEOUT_MS, stopServer, tally } from "./helpers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const { chromium } = createRequire(path.join(repo, "web/package.json"))("playwright-core");
const binary = path.resolve(process.argv[2] ?? path.join(repo, "build/gpurent"));
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const IMAGE = "localhost/gpurent/dev:bookworm"; // tests/container_fixture.h kImage

function skip(why) {
  console.error(`browser_console_containers: SKIPPED: ${why}`);
  process.exit(77);
}
const has = (cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;

function prerequisites() {
  if (process.getuid?.() !== 0) skip("needs root (Podman containers with device nodes)");
  for (const cmd of ["podman", "ssh", "ssh-keygen", "mknod"]) if (!has(cmd)) skip(`${cmd} is not installed (scripts/install-deps.sh)`);
  const built = spawnSync(path.join(repo, "scripts/debian-image"),
    [IMAGE, "bookworm", "python3,procps,iproute2,openssh-server,jupyter-notebook", "minbase"], { encoding: "utf8" });
  if (built.status === 77) skip(`the test image cannot be built: ${built.stdout}${built.stderr}`);
  if (built.status !== 0) throw new Error(`scripts/debian-image failed: ${built.stdout}${built.stderr}`);
}

async function startServer(dir, ports) {
  const server = spawn(binary, [
    "serve", "--db", "./g.db", "--port", "0", "--host", "127.0.0.1", "--static-dir", path.join(repo, "web/dist"),
    "--executor", "local", "--containers", "--local-supplier", "dc", "--local-node", "box", "--local-gpu-model", "h100-sxm5-80gb",
    "--local-driver", "550.90.07", "--local-cuda", "12.4", "--local-run-dir", path.join(dir, "runs"), "--job-output-dir", path.join(dir, "out"),
    "--container-gpu-device", path.join(dir, "dev/gpu%d"), "--volume-root", path.join(dir, "volumes"),
    "--instance-ports", `${ports}-${ports + 9}`, "--instance-bind", "127.0.0.1", "--instance-host", "127.0.0.1", "--sched-interval-ms", "200",
  ], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const stderr = [];
  server.stderr.on("data", (chunk) => stderr.push(chunk));
  const lines = createInterface({ input: server.stdout });
  const first = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { server.kill("SIGTERM"); reject(new Error("server did not listen in 60 s")); }, 60_000);
    lines.once("line", (line) => { clearTimeout(timer); resolve(line); });
    server.once("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${Buffer.concat(stderr)}`)); });
  });
  lines.on("line", () => {});
  const listening = JSON.parse(first);
  return { server, url: listening.url.replace(/\/$/, ""), adminToken: readFileSync(path.resolve(dir, listening.admin_token_file), "utf8").trim() };
}

/** `command` (as the page shows it: "ssh -p PORT USER@HOST") run with the test's key; its exit status and output. */
function sshWith(command, key, knownHosts, remote) {
  const words = command.split(" ");
  if (words[0] !== "ssh") return { status: -1, out: `not an ssh command: ${command}` };
  const r = spawnSync("ssh", ["-i", key, "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "IdentitiesOnly=yes",
    "-o", `UserKnownHostsFile=${knownHosts}`, "-o", "StrictHostKeyChecking=accept-new", ...words.slice(1), remote], { encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

async function run(page, base, adminToken, dir) {
  // The world: the machine is supplier dc's node "box" with two GPU device files; tenant acme, its
  // project, a member who uses the console.
  const made = [
    await api(base, adminToken, "POST", "suppliers", { name: "dc", display_name: "DC", region: "cn-east", country: "CN",
      sites: [{ name: "site-a", region: "cn-east", city: "Shanghai", tier: 3 }], contact_email: "noc@dc.example.com" }),
    await api(base, adminToken, "POST", "tenants", { name: "acme", display_name: "Acme", currency: "USD", contact_email: "ops@acme.example.com" }),
    await api(base, adminToken, "POST", "projects", { name: "console", tenant: "acme", quota: { gpus_per_model: { "h100-sxm5-80gb": 2 }, max_concurrent_jobs: 5 } }),
    await api(base, adminToken, "POST", "users", { name: "acme-dev", email: "dev@acme.example.com", role: "tenant_member", tenant: "acme" }),
    // The console offers the models some offer sells.
    await api(base, adminToken, "POST", "offers", { name: "dc-h100", supplier: "dc", region: "cn-east", gpu_model: "h100-sxm5-80gb",
      node_selector: { site: "site-a" }, currency: "USD", prices: { on_demand: "2.50" }, min_increment_seconds: 1, fees: { billing_starts: "running" } }),
  ];
  check(made.every((r) => r.status === 201), `supplier, tenant, project, member and offer created (${made.map((r) => r.status === 201 ? 201 : JSON.stringify(r.json)).join(", ")})`);
  const tenant = made[1].json;
  for (let i = 0; i < 100; i++) {
    const nodes = (await api(base, adminToken, "GET", "nodes?supplier=dc")).json;
    if (nodes?.items?.length === 1) break;
    await sleep(100);
  }
  const member = (await api(base, adminToken, "POST", "tokens", { user: "acme-dev", name: "console" })).json.token;
  const home = await api(base, member, "POST", "volumes", { name: "home", size_gb: 10 });
  check(home.status === 201, `the member's volume (HTTP ${home.status})`);
  const key = path.join(dir, "ssh/id");
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "dev@laptop", "-f", key]);
  const pub = readFileSync(`${key}.pub`, "utf8").trim();

  // 1. Created from the form, with a key and a notebook: running, and the page shows how to reach it.
  await page.goto(`${base}/`);
  await login(page, member);
  await openView(page, "#/instances", "instances");
  const form = page.getByTestId("instance-form");
  await form.getByTestId("instance-name").fill("ssh-box");
  await form.getByTestId("instance-project").selectOption({ label: "console" });
  await form.getByTestId("instance-gpus").fill("1");
  await form.getByTestId("instance-model").selectOption("h100-sxm5-80gb");
  await form.getByTestId("instance-image").fill(IMAGE);
  await form.getByTestId("instance-volume").selectOption("home");
  await form.getByTestId("instance-ssh-keys").fill(pub);
  await form.getByTestId("instance-notebook-on").check();
  await form.getByTestId("instance-create").click();
  await page.getByTestId("instance-done").waitFor({ timeout: STEP_TIMEOUT_MS });
  const row = (name) => page.locator(`[data-testid="instances-table"] tr[data-row="${name}"]`);
  await row("ssh-box").locator('[data-testid="instance-state"][data-state="running"]').waitFor({ timeout: 120_000 });
  const ssh = row("ssh-box").getByTestId("instance-ssh");
  await ssh.waitFor({ timeout: STEP_TIMEOUT_MS });
  const shown = await cellText(ssh);
  const inst = (await api(base, member, "GET", "instances/ssh-box")).json;
  check(inst.access?.ssh?.command === shown && /^ssh -p \d+ gpurent@127\.0\.0\.1$/.test(shown),
    `the page shows the SSH command as the API gives it: "${shown}"`);
  const link = await row("ssh-box").getByTestId("instance-notebook").getAttribute("href");
  check(link === inst.access?.notebook?.url && link?.includes("?token="), "the notebook link is the API's URL with its token");
  check((await cellText(row("ssh-box").getByTestId("instance-volumes"))) === "disk home (10 GB) at /data", "the row names its data disk and its size");
  await shot(page, "30-console-ssh");

  // 2. That very command logs in (sshd starts a moment after the container).
  const knownHosts = path.join(dir, "ssh/known_hosts");
  let login1 = { status: -1, out: "" };
  for (let i = 0; i < 60 && login1.status !== 0; i++) {
    login1 = sshWith(shown, key, knownHosts, "id -un; ls /dev | grep -c nvidia");
    if (login1.status !== 0) await sleep(500);
  }
  check(login1.status === 0 && login1.out.startsWith("gpurent\n1\n"), `the page's SSH command logs in with the tenant's key, one GPU inside: ${JSON.stringify(login1.out)}`);
  // And the page's notebook link opens the notebook (Jupyter starts a moment after the container).
  let opened = 0;
  for (let i = 0; i < 60 && opened !== 200; i++) {
    opened = await fetch(link).then((r) => r.status, () => 0);
    if (opened !== 200) await sleep(500);
  }
  check(opened === 200, `the page's notebook link opens the notebook (HTTP ${opened})`);
  const noToken = await fetch(`${new URL(link).origin}/api/status`).then((r) => r.status, () => 0);
  check(noToken === 403, `without its token the notebook refuses (HTTP ${noToken})`);

  // Saved as an image from the page: the server answers at once, the node saves it, the image is
  // the tenant's, made from this instance.
  page.once("dialog", (d) => void d.accept("ssh-box-env"));
  await row("ssh-box").getByTestId("instance-save").click();
  await page.getByTestId("instance-done").waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await cellText(page.getByTestId("instance-done"))).includes("ssh-box-env"), "save: the page says the image is being saved");
  let image;
  for (let i = 0; i < 300; i++) {
    image = (await api(base, member, "GET", "images/ssh-box-env")).json;
    if (image?.state === "ready" || image?.state === "failed") break;
    await sleep(500);
  }
  check(image?.state === "ready" && image.source?.instance === "ssh-box" && image.visibility === "tenant",
    `save: image ssh-box-env is ready, the tenant's, from ssh-box (${JSON.stringify({ state: image?.state, error: image?.error, source: image?.source })})`);

  // 3. In 简体中文: the same command, the column and the state translated.
  await page.getByTestId("lang-select").selectOption("zh-CN");
  await openView(page, "#/instances?lang=zh", "instances");
  check((await cellText(row("ssh-box").getByTestId("instance-state"))) === "运行中", "zh: the state reads 运行中");
  check((await cellText(row("ssh-box").getByTestId("instance-save"))) === "保存镜像", "zh: the save button reads 保存镜像");
  check((await cellText(row("ssh-box").getByTestId("instance-volumes"))) === "数据盘 home (10 GB)（/data）", "zh: the data disk line");
  check((await cellText(row("ssh-box").getByTestId("instance-ssh"))) === shown, "zh: the same SSH command");
  const header = await page.locator('[data-testid="instances-table"] thead').innerText();
  check(/访问/.test(header), `zh: the access column's header is Chinese (${header.replace(/\s+/g, " ").trim()})`);
  await shot(page, "31-console-ssh-zh");
  await page.getByTestId("lang-select").selectOption("en");

  // 4. Stop from the page: the command goes from the page and the session is refused.
  await openView(page, "#/instances?r=1", "instances");
  await row("ssh-box").getByTestId("instance-stop").click();
  // A stop takes its container's stop (Podman waits up to 10 s for PID 1), the 2 s the instance
  // stays stopping after its run is gone, and the executor's ticks: more than a step's 15 s on a
  // loaded machine (seen once on a clean clone running the whole test set).
  await row("ssh-box").locator('[data-testid="instance-state"][data-state="stopped"]').waitFor({ timeout: 60_000 });
  check((await row("ssh-box").getByTestId("instance-ssh").count()) === 0, "stopped: no SSH command on the page");
  let after = { status: 0 };
  for (let i = 0; i < 40 && after.status !== 255; i++) {
    after = sshWith(shown, key, knownHosts, "true");
    if (after.status !== 255) await sleep(500);
  }
  check(after.status === 255, "stopped: the SSH command no longer reaches anything");

  // 5. Release from the page.
  page.once("dialog", (d) => void d.accept());
  await row("ssh-box").getByTestId("instance-release").click();
  await row("ssh-box").locator('[data-testid="instance-state"][data-state="released"]').waitFor({ timeout: STEP_TIMEOUT_MS });
  check((await api(base, member, "GET", "instances/ssh-box")).status === 404, "released from the page: its name is free");
  return tenant.id;
}

async function main() {
  prerequisites();
  mkdirSync(artifacts, { recursive: true });
  const dir = mkdtempSync(path.join(tmpdir(), "gpurent-browser-containers-"));
  for (const d of ["dev", "out", "volumes", "runs", "ssh"]) mkdirSync(path.join(dir, d));
  for (const i of [0, 1]) execFileSync("mknod", [path.join(dir, `dev/gpu${i}`), "c", "1", "3"]);
  const ports = 15000 + (process.pid % 400) * 10; // below the ephemeral range, away from the C++ container tests' 20000-31999
  let server;
  let context;
  let tenantId;
  try {
    const started = await startServer(dir, ports);
    server = started.server;
    console.log(`server ${started.url} (work dir ${dir})`);
    context = await chromium.launchPersistentContext(path.join(dir, "chromium-profile"), {
      executablePath: chromiumPath, headless: true, viewport: { width: 1400, height: 900 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    tenantId = await runOnPage(page, "failure-containers", () => run(page, started.url, started.adminToken, dir));
  } catch (e) {
    check(false, `test aborted: ${e.stack ?? e}`);
  } finally {
    if (context) await context.close().catch(() => {});
    await stopServer(server);
    if (tenantId) { // only this test's containers (its tenant's network): other container tests may run beside it
      const net = `gpurent-${tenantId}`;
      spawnSync("sh", ["-c", `podman rm -f $(podman ps -aq --filter network=${net}) >/dev/null 2>&1; podman network rm -f ${net} >/dev/null 2>&1`]);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const { passes, failures } = tally();
  console.log(`browser_console_containers: ${passes} passed, ${failures} failed`);
  process.exit(failures === 0 ? 0 : 1);
}

await main();
