#!/usr/bin/env node
// openapi_live_responses: the answers of a real `gpurent serve --demo` against docs/openapi.json,
// validated by Ajv (tests/openapi/schemas.mjs: strict about undocumented keys), then its /metrics
// checked as Prometheus reads it.
//
// Responses: every GET operation of the document is called as the operator admin, as one demo
// user of each other role and without a token. Path parameters are filled from the demo's own
// lists (every item the caller sees by id, the first by name, one the caller cannot see, one that
// does not exist); query parameters one at a time with values from the demo (enum values, ids of
// the demo's objects, the current month, a page's next_after). Each answer's status must be
// documented for the operation, its media type too, and a JSON body must match the schema; every
// operation must have at least one 2xx answer. What the replayed days may lack is made first, so
// every item route has an item (each write's answer is checked too): a webhook, a fault (the node
// of a running job marked unavailable), an alert (a project's monthly budget set to 0.00).
//
// Metrics: after those requests, an unknown path and a method no route has, /metrics (with the
// operator's token) must parse as the text exposition format 0.0.4 (families grouped, TYPE before
// samples, no duplicate series, histograms consistent), every `route` label must be a path of the
// document or "unmatched", the unknown requests must be counted under "unmatched", and
// gpurent_build_info{version} must be 1 with the binary's version. `promtool check metrics` runs
// too when promtool is installed (Debian: prometheus).
//
// Usage: node tests/openapi/live_test.mjs /path/to/gpurent
// Env: SERVER_START_TIMEOUT_S (default 300), DEMO_DAYS (past days the demo replays, default 2),
// VERBOSE=1 (print every request), OPENAPI_DOC (another copy of the document, for a binary built
// from another revision: the route labels are checked against it too).
// Exit status 0 when every check passes, 1 otherwise.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { repo, resolveRef, schemaValidators } from "./schemas.mjs";

const binary = path.resolve(process.argv[2] ?? path.join(repo, "build/gpurent"));
const START_TIMEOUT_S = Number(process.env.SERVER_START_TIMEOUT_S ?? 300);
// Two replayed days usually hold a node failure, cost alerts and closed runs (the test makes what
// is missing: see ensureItems).
const DEMO_DAYS = process.env.DEMO_DAYS ?? "2";
const VERBOSE = process.env.VERBOSE === "1";

const doc = JSON.parse(readFileSync(process.env.OPENAPI_DOC ?? path.join(repo, "docs/openapi.json"), "utf8"));
const validators = schemaValidators(doc);

let failures = 0;
const fail = (what) => { failures++; console.log(`FAIL ${what}`); };
const ok = (what) => console.log(`ok   ${what}`);

// --- the server -----------------------------------------------------------------------

async function startServer(dir) {
  const server = spawn(binary, ["serve", "--demo", "--demo-days", DEMO_DAYS, "--db", "./d.db", "--port", "0",
    "--host", "127.0.0.1", "--no-rate-limits",
    "--slurm-output-dir", "./logs",  // GET /jobs/{ref}/logs reads here (the test writes one log below)
    "--firewall-interval-s", "1"],  // the cost firewall runs every second: an alert appears quickly
  { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const stderr = [];
  server.stderr.on("data", (chunk) => { stderr.push(chunk); if (stderr.length > 2000) stderr.shift(); });
  const lines = createInterface({ input: server.stdout });
  const first = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      server.kill("SIGTERM");
      reject(new Error(`server did not print its listening line in ${START_TIMEOUT_S} s`));
    }, START_TIMEOUT_S * 1000);
    lines.once("line", (line) => { clearTimeout(timer); resolve(line); });
    server.once("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${Buffer.concat(stderr)}`)); });
  });
  lines.on("line", () => {});
  const listening = JSON.parse(first);
  if (listening.event !== "listening" || !listening.url) throw new Error(`unexpected first line: ${first}`);
  const admin = readFileSync(path.resolve(dir, listening.admin_token_file), "utf8").trim();
  // One demo user of each role besides the operator (the demo writes their tokens beside the db).
  const callers = [{ name: "operator_admin", token: admin }];
  const tokensFile = listening.demo?.tokens_file;
  if (tokensFile) {
    const seen = new Set();
    for (const t of JSON.parse(readFileSync(path.resolve(dir, tokensFile), "utf8")))
      if (!seen.has(t.role)) { seen.add(t.role); callers.push({ name: `${t.role} ${t.user}`, token: t.token }); }
  }
  return { server, base: listening.url.replace(/\/$/, ""), callers };
}

async function call(base, token, method, target, body, rawType) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = rawType ?? "application/json";
  const sent = body === undefined ? undefined : rawType ? body : JSON.stringify(body);
  const res = await fetch(base + target, { method, headers, body: sent });
  const text = await res.text();
  const media = (res.headers.get("content-type") ?? "").split(";")[0].trim();
  let json;
  if (media.includes("json")) {
    try { json = JSON.parse(text); } catch { json = undefined; }
  }
  if (VERBOSE) console.log(`     ${method} ${target} -> ${res.status}`);
  return { status: res.status, media, headers: res.headers, text, json };
}

// --- checking an answer against the document ------------------------------------------

const statusesSeen = new Map();  // "GET /path" -> Set of statuses
const TEXT_MEDIA = new Set(["text/plain", "text/csv", "text/html", "text/markdown"]);

function valueAt(body, pointer) {
  let at = body;
  for (const part of pointer.split("/").slice(1)) at = at?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  return at;
}

function expectDocumented(reply, method, template, target, who) {
  const where = `${who}: ${method} ${target}`;
  const key = `${method} ${template}`;
  if (!statusesSeen.has(key)) statusesSeen.set(key, new Set());
  statusesSeen.get(key).add(reply.status);
  const op = doc.paths[template]?.[method.toLowerCase()];
  if (!op) return fail(`${where}: ${method} ${template} is not in the document`);
  const code = String(reply.status);
  if (reply.status >= 500) return fail(`${where} answered ${code}: ${reply.text.slice(0, 400)}`);
  const documented = op.responses[code] ?? op.responses[`${code[0]}XX`] ?? op.responses.default;
  if (!documented) return fail(`${where} answered ${code}, which the document does not list (${Object.keys(op.responses).join(", ")}): ${reply.text.slice(0, 300)}`);
  const resp = resolveRef(doc, documented);
  for (const name of Object.keys(resp.headers ?? {}))
    if (!reply.headers.has(name)) fail(`${where} ${code}: lacks the documented header ${name}`);
  if (!resp.content) {
    if (reply.text.length > 0) fail(`${where} ${code}: a body where the document has none`);
    return true;
  }
  const content = resp.content[reply.media];
  if (!content) return fail(`${where} ${code}: media type "${reply.media}" is not documented (${Object.keys(resp.content).join(", ")})`);
  if (TEXT_MEDIA.has(reply.media) || !content.schema) return true;
  if (reply.json === undefined) return fail(`${where} ${code}: the body is not JSON: ${reply.text.slice(0, 200)}`);
  const validate = validators.compile(content.schema);
  if (validate(reply.json)) return true;
  const errors = validate.errors.slice(0, 5).map((e) => {
    const extra = e.params?.unevaluatedProperty ? ` '${e.params.unevaluatedProperty}' (not in the document)` : "";
    const value = JSON.stringify(valueAt(reply.json, e.instancePath)) ?? "undefined";
    return `${e.instancePath || "/"} ${e.message}${extra}; value: ${value.slice(0, 160)}`;
  });
  const more = validate.errors.length > 5 ? ` (and ${validate.errors.length - 5} more)` : "";
  return fail(`${where} ${code} does not match the document's schema${more}:\n       ${errors.join("\n       ")}`);
}

// --- filling parameters from the demo ---------------------------------------------------

const resolveParam = (p) => resolveRef(doc, p);
const paramsOf = (template, op) =>
  [...(doc.paths[template].parameters ?? []), ...(op.parameters ?? [])].map(resolveParam);
const itemsOf = (body) => (Array.isArray(body?.items) ? body.items : Array.isArray(body) ? body : []);

/** Every item of a list operation the caller can see (following pages). */
async function listAll(base, token, listPath, docPath = listPath) {
  const op = doc.paths[docPath]?.get;
  if (!op) return null;
  const paged = paramsOf(docPath, op).some((p) => p.name === "limit");
  const items = [];
  for (let after = "", i = 0; i < 100; i++) {
    const q = paged ? `?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ""}` : "";
    const r = await call(base, token, "GET", listPath + q);
    if (r.status !== 200) return items;
    items.push(...itemsOf(r.json));
    if (!paged || !r.json?.next_after) break;
    after = r.json.next_after;
  }
  return items;
}

/** Values from the demo for a query parameter that names an object or a field. */
function demoValues(name, schema, ownItems, world) {
  if (schema?.enum) return schema.enum.map(String);
  const now = Date.now();
  switch (name) {
    case "limit": return ["1"];
    case "after": return [];  // follows a page's next_after (see below)
    case "month": return [new Date(now).toISOString().slice(0, 7)];
    case "from": return [new Date(now - 2 * 86_400_000).toISOString()];
    case "to": return [new Date(now).toISOString()];
    case "gpu": return ["0"];
    default: break;
  }
  // A field of the list's own items (region, kind, state, supplier_id…), so the filter matches.
  for (const it of ownItems ?? []) {
    for (const v of [it[name], it[`${name}_id`], it.status?.[name]])
      if (typeof v === "string" && v) return [v];
  }
  const first = (kind) => (world[kind]?.[0]?.id ? [world[kind][0].id] : []);
  // The demo's market book (GET /api/v1/market/quote, …/depth, …/prints name a book by these).
  const book = world["market-orders"]?.[0];
  if (book && ["gpu_model", "region", "starts_at", "ends_at"].includes(name) && typeof book[name] === "string")
    return [book[name]];
  switch (name) {
    case "tenant": return first("tenants");
    case "project": return first("projects");
    case "supplier": return first("suppliers");
    case "user": return first("users");
    case "gpu_model": return first("gpu-models");
    case "job": return world.ranJob ? [world.ranJob] : first("jobs");
    case "node": return world.ranNode ? [world.ranNode] : first("nodes");
    case "name": return ownItems?.[0]?.name ? [ownItems[0].name] : [];
    case "region": return world.nodes?.[0]?.region ? [world.nodes[0].region] : [];
    default: return [];
  }
}

const unfilled = new Set();  // optional query parameters left out for want of a value
const exercised = new Set();

/** The targets to GET for one operation as one caller: [{target, template}]. */
async function targetsFor(base, caller, template, op, world) {
  const params = paramsOf(template, op);
  const pathParams = params.filter((p) => p.in === "path");
  const query = params.filter((p) => p.in === "query");
  // Path parameters: every item of the collection the path sits under that the caller sees.
  let paths = [template];
  for (const p of pathParams) {
    const at = template.indexOf(`{${p.name}}`);
    const collection = template.slice(0, at - 1);
    const next = [];
    for (const filled of paths) {
      const listPath = filled.slice(0, filled.indexOf(`{${p.name}}`) - 1);
      const mine = await listAll(base, caller.token, listPath, collection);
      if (mine === null) { fail(`cannot fill {${p.name}} of ${template}: ${collection} has no GET`); return []; }
      const everyone = world[collection] ?? [];
      const values = mine.map((it) => it.id).filter(Boolean);
      if (mine[0]?.name) values.push(mine[0].name);
      const hidden = everyone.find((it) => !mine.some((m) => m.id === it.id));
      if (hidden) values.push(hidden.id);
      values.push(`no-such-${p.name}`);
      // Every value for the last parameter; the first one only for those before it.
      const used = p === pathParams[pathParams.length - 1] ? values : values.slice(0, 1);
      for (const v of used) next.push(filled.replace(`{${p.name}}`, encodeURIComponent(v)));
    }
    paths = next;
  }
  const listItems = pathParams.length === 0 ? itemsOf((await call(base, caller.token, "GET", template)).json) : [];
  // Required query parameters always; each optional one alone beside them.
  const required = [];
  for (const p of query.filter((q) => q.required)) {
    const v = demoValues(p.name, resolveParam(p.schema ?? {}), listItems, world);
    if (!v.length) { fail(`cannot fill the required query parameter ${p.name} of GET ${template}`); return []; }
    required.push(`${p.name}=${encodeURIComponent(v[0])}`);
  }
  const variants = [required];
  for (const p of query.filter((q) => !q.required)) {
    const values = demoValues(p.name, resolveParam(p.schema ?? {}), listItems, world);
    if (!values.length && p.name !== "after") unfilled.add(`GET ${template} ?${p.name}`);
    if (values.length) exercised.add(`GET ${template} ?${p.name}`);
    for (const v of values) variants.push([...required, `${p.name}=${encodeURIComponent(v)}`]);
  }
  const out = [];
  paths.forEach((filled, i) => {
    for (const q of i === 0 ? variants : [required]) out.push({ template, target: q.length ? `${filled}?${q.join("&")}` : filled });
  });
  return out;
}

// --- the run --------------------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls a list until it has an item (up to `seconds`); its items. */
async function waitForItems(base, token, listPath, seconds) {
  for (let i = 0; ; i++) {
    const items = (await listAll(base, token, listPath)) ?? [];
    if (items.length || i >= seconds * 5) return items;
    await sleep(200);
  }
}

/** Makes an item of each kind whose item route would otherwise have nothing to show. */
async function ensureItems(base, admin) {
  const write = async (method, target, template, body, rawType) => {
    const r = await call(base, admin.token, method, target, body, rawType);
    expectDocumented(r, method, template, target, `${admin.name} (setup)`);
    return r;
  };
  if (!(await listAll(base, admin.token, "/api/v1/webhooks"))?.length)
    await write("POST", "/api/v1/webhooks", "/api/v1/webhooks",
      { name: "openapi-live", type: "generic", url: "http://127.0.0.1:9/openapi-live" });
  // A node failure under a running job records a fault (and requeues the job).
  const runs = (await waitForItems(base, admin.token, "/api/v1/allocations", 30)).filter((a) => a.state === "open");
  if (!(await listAll(base, admin.token, "/api/v1/faults"))?.length) {
    const node = runs.find((a) => a.placement?.[0]?.node_id)?.placement[0].node_id;
    if (!node) fail("setup: no running job whose node could fail, so no fault to show");
    else {
      const got = await call(base, admin.token, "GET", `/api/v1/nodes/${node}`);
      await write("PUT", `/api/v1/nodes/${node}`, "/api/v1/nodes/{ref}",
        { ...got.json, state: "unavailable", state_reason: "openapi_live_responses: Xid 79" });
      if (!(await waitForItems(base, admin.token, "/api/v1/faults", 20)).length)
        fail(`setup: node ${node} marked unavailable under a running job, but no fault was recorded in 20 s`);
    }
  }
  // A spot market price on an offer that sells spot (the demo records none), so its routes have one.
  if (!(await listAll(base, admin.token, "/api/v1/spot-prices"))?.length) {
    const offer = ((await listAll(base, admin.token, "/api/v1/offers")) ?? []).find((o) => o.prices?.spot);
    if (!offer) fail("setup: no demo offer sells spot, so no spot price to show");
    else await write("POST", "/api/v1/spot-prices", "/api/v1/spot-prices", { offer: offer.id, price: offer.prices.spot });
  }
  // An artifact (the demo has none), declared and uploaded, so its routes have one to answer.
  const first = (await listAll(base, admin.token, "/api/v1/projects"))?.[0];
  const arts = `/api/v1/projects/${first?.id}/artifacts`;
  if (first && !(await listAll(base, admin.token, arts, "/api/v1/projects/{ref}/artifacts"))?.length) {
    const content = "openapi live weights";
    const sha256 = createHash("sha256").update(content).digest("hex");
    await write("POST", arts, "/api/v1/projects/{ref}/artifacts", { name: "openapi-live", kind: "model", sha256, size_bytes: content.length });
    const done = await write("PUT", `${arts}/openapi-live/content?offset=0`, "/api/v1/projects/{ref}/artifacts/{name}/content",
      content, "application/octet-stream");
    if (done.json?.state !== "ready") fail(`setup: the artifact did not become ready: ${done.text}`);
  }
  // A zero monthly budget: the cost firewall (every second here) raises a budget alert.
  if (!(await listAll(base, admin.token, "/api/v1/alerts"))?.length) {
    const project = (await listAll(base, admin.token, "/api/v1/projects"))?.[0];
    const quota = await call(base, admin.token, "GET", `/api/v1/projects/${project.id}/quota`);
    await write("PUT", `/api/v1/projects/${project.id}/quota`, "/api/v1/projects/{ref}/quota",
      { ...quota.json, monthly_budget: "0.00" });
    if (!(await waitForItems(base, admin.token, "/api/v1/alerts", 20)).length)
      fail(`setup: project ${project.name} has a zero budget, but the cost firewall raised no alert in 20 s`);
  }
}

async function checkResponses(base, callers, logDir) {
  const [admin] = callers;
  await ensureItems(base, admin);
  // What the operator sees, for the values of parameters.
  const world = {};
  for (const p of Object.keys(doc.paths))
    if (doc.paths[p].get && !p.includes("{") && p.startsWith("/api/v1/"))
      world[p.slice("/api/v1/".length)] = world[p] = await listAll(base, admin.token, p) ?? [];
  const run = world.allocations?.find((a) => a.placement?.[0]?.node_id);
  world.ranJob = run?.job_id;
  world.ranNode = run?.placement[0].node_id;
  // The demo's simulated executor writes no output: a run's log as the Slurm executor would.
  const logJob = world.ranJob ?? world.jobs?.[0]?.id;
  if (logJob) {
    mkdirSync(path.join(logDir, "logs"), { recursive: true });
    writeFileSync(path.join(logDir, "logs", `${logJob}-1.log`), "step 1/3\nstep 2/3 — 第二步\n");
  }

  const gets = Object.entries(doc.paths).filter(([, item]) => item.get).map(([p, item]) => [p, item.get]);
  let requests = 0;
  for (const caller of [...callers, { name: "anonymous", token: "" }]) {
    for (const [template, op] of gets) {
      let targets = await targetsFor(base, caller.token ? caller : admin, template, op, world);
      if (!caller.token) targets = targets.slice(0, 1);
      for (const { target } of targets) {
        const reply = await call(base, caller.token, "GET", target);
        requests++;
        expectDocumented(reply, "GET", template, target, caller.name);
        // A page's next_after leads to the next page.
        if (/[?&]limit=1(&|$)/.test(target) && typeof reply.json?.next_after === "string") {
          const next = `${target}&after=${encodeURIComponent(reply.json.next_after)}`;
          expectDocumented(await call(base, caller.token, "GET", next), "GET", template, next, caller.name);
          requests++;
        }
      }
    }
  }
  ok(`${requests} GET requests over ${gets.length} operations as ${callers.length + 1} callers (${callers.map((c) => c.name).join(", ")}, anonymous)`);
  for (const [template] of gets) {
    const seen = [...(statusesSeen.get(`GET ${template}`) ?? [])].sort();
    if (!seen.some((s) => s >= 200 && s < 300)) fail(`GET ${template}: no 2xx answer to validate (statuses: ${seen.join(", ") || "none"})`);
  }
  const never = [...unfilled].filter((p) => !exercised.has(p));
  if (never.length) console.log(`note: query parameters no caller had a value for (not exercised): ${never.join("; ")}`);
}

// --- /metrics -------------------------------------------------------------------------

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]?Inf|NaN)$/;

/** Parses the text exposition format 0.0.4; returns { families: Map(name -> {type, help, samples}), errors }. */
export function parseExposition(text) {
  const errors = [];
  const families = new Map();
  const family = (name) => {
    if (!families.has(name)) families.set(name, { type: "untyped", help: undefined, samples: [], typed: false });
    return families.get(name);
  };
  const familyOf = (sample) => {
    for (const suffix of ["_bucket", "_sum", "_count", ""]) {
      if (!sample.endsWith(suffix)) continue;
      const base = sample.slice(0, sample.length - suffix.length);
      const f = families.get(base);
      if (f && (suffix === "" || f.type === "histogram" || f.type === "summary")) return base;
    }
    return sample;
  };
  const series = new Set();
  const closed = new Set();  // families whose samples ended (a family must be contiguous)
  let current;
  text.split("\n").forEach((line, i) => {
    const at = `line ${i + 1}`;
    if (line === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) return;  // a comment
      const [, kind, name, rest = ""] = m;
      if (!NAME.test(name)) errors.push(`${at}: bad metric name ${name}`);
      const f = family(name);
      if (kind === "HELP") {
        if (f.help !== undefined) errors.push(`${at}: second HELP for ${name}`);
        f.help = rest;
      } else {
        if (f.typed) errors.push(`${at}: second TYPE for ${name}`);
        if (f.samples.length) errors.push(`${at}: TYPE for ${name} after its samples`);
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) errors.push(`${at}: unknown type ${rest}`);
        f.type = rest;
        f.typed = true;
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?$/.exec(line);
    if (!m) { errors.push(`${at}: not a sample: ${line}`); return; }
    const [, name, , labelText = "", value] = m;
    const labels = {};
    const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"\s*(,|$)/y;
    let pos = 0;
    while (pos < labelText.length) {
      re.lastIndex = pos;
      const l = re.exec(labelText);
      if (!l) { errors.push(`${at}: bad labels {${labelText}}`); break; }
      if (l[1] in labels) errors.push(`${at}: label ${l[1]} twice`);
      labels[l[1]] = l[2].replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
      pos = re.lastIndex;
    }
    if (!VALUE.test(value)) errors.push(`${at}: bad value ${value}`);
    const base = familyOf(name);
    if (current !== base) {
      if (closed.has(base)) errors.push(`${at}: samples of ${base} are not grouped together`);
      if (current !== undefined) closed.add(current);
      current = base;
    }
    const key = name + JSON.stringify(Object.entries(labels).sort());
    if (series.has(key)) errors.push(`${at}: duplicate series ${name}{${labelText}}`);
    series.add(key);
    family(base).samples.push({ name, labels, value: Number(value.replace(/^\+?Inf$/, "Infinity").replace(/^-Inf$/, "-Infinity")) });
  });
  for (const [name, f] of families) {
    if (f.type === "counter" && !name.endsWith("_total")) errors.push(`counter ${name} does not end in _total`);
    if (f.type !== "histogram") continue;
    // Per label set (le aside): buckets cumulative, the +Inf bucket equal to _count.
    const groups = new Map();
    for (const s of f.samples) {
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      if (!groups.has(key)) groups.set(key, { buckets: [], count: undefined });
      const g = groups.get(key);
      if (s.name.endsWith("_bucket")) g.buckets.push([le === "+Inf" ? Infinity : Number(le), s.value]);
      else if (s.name.endsWith("_count")) g.count = s.value;
    }
    for (const [key, g] of groups) {
      const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
      if (!sorted.length || sorted[sorted.length - 1][0] !== Infinity) errors.push(`${name}${key}: no +Inf bucket`);
      else if (sorted[sorted.length - 1][1] !== g.count) errors.push(`${name}${key}: +Inf bucket differs from _count`);
      for (let i = 1; i < sorted.length; i++)
        if (sorted[i][1] < sorted[i - 1][1]) errors.push(`${name}${key}: buckets are not cumulative`);
    }
  }
  return { families, errors };
}

async function checkMetrics(base, admin) {
  // What no route answers: an unknown path, a method the path does not have.
  const unknown = await call(base, admin.token, "GET", "/no-such-route/openapi-live");
  if (unknown.status !== 404) fail(`GET /no-such-route answered ${unknown.status}, not 404`);
  const wrongMethod = await call(base, admin.token, "PATCH", "/api/v1/tenants", {});
  if (wrongMethod.status !== 405) fail(`PATCH /api/v1/tenants answered ${wrongMethod.status}, not 405`);

  const scrape = await call(base, admin.token, "GET", "/metrics");
  if (scrape.status !== 200) return fail(`GET /metrics answered ${scrape.status}`);
  const { families, errors } = parseExposition(scrape.text);
  if (errors.length) fail(`/metrics is not valid exposition text:\n       ${errors.slice(0, 10).join("\n       ")}`);
  else ok(`/metrics parses as the text exposition format (${families.size} families)`);

  const promtool = spawnSync("promtool", ["check", "metrics"], { input: scrape.text, encoding: "utf8" });
  if (promtool.error?.code === "ENOENT") console.log("note: promtool is not installed (Debian: prometheus); the exposition was checked by this test's parser");
  else if (promtool.status !== 0) fail(`promtool check metrics:\n${promtool.stdout}${promtool.stderr}`);
  else ok("promtool check metrics");

  const templates = new Set(Object.keys(doc.paths));
  const labels = new Map();  // route label -> samples of gpurent_http_requests_total
  for (const f of ["gpurent_http_requests_total", "gpurent_http_request_duration_seconds"])
    for (const s of families.get(f)?.samples ?? []) {
      if (!("route" in s.labels)) { fail(`${s.name} without a route label`); continue; }
      if (!labels.has(s.labels.route)) labels.set(s.labels.route, []);
      if (s.name === "gpurent_http_requests_total") labels.get(s.labels.route).push(s);
    }
  const stray = [...labels.keys()].filter((r) => !templates.has(r) && r !== "unmatched" && r !== "static");
  if (stray.length) fail(`route labels that are not a path of docs/openapi.json (nor "unmatched"): ${stray.join(", ")}`);
  else ok(`every route label (${labels.size}) is a path template of the document or "unmatched"`);
  const missing = [...statusesSeen.keys()].filter((k) => k.startsWith("GET ")).map((k) => k.slice(4))
    .filter((t) => !labels.has(t));
  if (missing.length) fail(`paths requested but absent from gpurent_http_requests_total: ${missing.join(", ")}`);
  const unmatched = labels.get("unmatched") ?? [];
  const count = (method, status) =>
    unmatched.filter((s) => s.labels.method === method && s.labels.status === status).reduce((n, s) => n + s.value, 0);
  if (count("GET", "404") < 1 || count("PATCH", "405") < 1)
    fail(`the unknown route (GET 404) and method (PATCH 405) are not counted as route="unmatched" (${JSON.stringify(unmatched.map((s) => s.labels))})`);
  else ok(`requests no route answered are counted as route="unmatched"`);

  const version = (spawnSync(binary, ["version"], { encoding: "utf8" }).stdout ?? "").trim().split(/\s+/).pop();
  const info = families.get("gpurent_build_info");
  const sample = info?.samples[0];
  if (!info || info.type !== "gauge" || info.samples.length !== 1 || sample.value !== 1)
    fail(`gpurent_build_info is not one gauge sample of value 1: ${JSON.stringify(info?.samples)}`);
  else if (sample.labels.version !== version)
    fail(`gpurent_build_info{version="${sample.labels.version}"}, but the binary says ${version}`);
  else ok(`gpurent_build_info{${Object.entries(sample.labels).map(([k, v]) => `${k}="${v}"`).join(",")}} 1`);
  const anonymous = await call(base, "", "GET", "/metrics");
  if (!/^gpurent_build_info\{/m.test(anonymous.text)) fail("gpurent_build_info is missing from /metrics without a token");
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), "gpurent-openapi-"));
  let server;
  try {
    const started = Date.now();
    const s = await startServer(dir);
    server = s.server;
    ok(`server up at ${s.base} in ${((Date.now() - started) / 1000).toFixed(1)} s (demo, ${DEMO_DAYS} past day(s) replayed)`);
    await checkResponses(s.base, s.callers, dir);
    await checkMetrics(s.base, s.callers[0]);
  } catch (e) {
    fail(`${e.stack ?? e}`);
  } finally {
    if (server) {
      server.kill("SIGTERM");
      await new Promise((r) => { server.once("exit", r); setTimeout(r, 10_000); });
    }
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(failures ? `openapi_live_responses: ${failures} check(s) failed` : "openapi_live_responses: every check passed");
  process.exit(failures ? 1 : 0);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
