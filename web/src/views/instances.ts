// "Instances": the tenant's console for interactive instances (docs/resources/instances.md).
// Lists them (GET /api/v1/instances) with their state and why, what they cost per hour running
// and stopped, what their starts have cost so far (each job's GET /jobs/{ref}/cost, summed per
// currency), their GPUs' latest utilization, and how to reach them (the SSH command, the notebook
// link); those who may submit the tenant's jobs also create, start, stop and release them (a released
// instance stays listed, read-only, for a week). The
// list reads itself again every few seconds while an instance is on its way up, so a start is
// seen to run without reloading the page.

import { ApiError, del, get, getAll, post } from "../api";
import { mayWriteJobs, tenantName, type ViewContext } from "../context";
import { cents, h, notice, num, replace, table, when, type Child } from "../dom";
import { labelled, numberInput, problemNotice, projectChoices, select, soldModels, textInput, intValue } from "../forms";
import { decimalSum } from "../format";
import { labelOr, renderMessage, t, type Key } from "../i18n";
import type { GpuModel, Instance, JobCost, Volume } from "../types";
import type { Project } from "../types_dashboard";
import { errorNotice } from "./errors";

// While an instance is on its way the list is read again every POLL_MS for POLL_FAST re-reads (a
// start is seen within seconds), then each wait half as long again as the last, at most every POLL_MAX_MS.
const POLL_MS = 2000;
const POLL_FAST = 15;
const POLL_MAX_MS = 30_000;
const COST_FETCHES = 8; // job cost requests in flight at once
const NEW_DISK = "\u0000new"; // the volume select's "a new disk" (no volume name has a NUL)
const TRANSITIONAL = new Set(["requested", "starting", "stopping"]);

export async function renderInstances(root: HTMLElement, ctx: ViewContext): Promise<void> {
  const writer = mayWriteJobs(ctx);
  let projects: { project: Project; label: string }[] = [];
  let models: GpuModel[] = [];
  let volumes: Volume[] = [];
  try {
    [projects, models, volumes] = await Promise.all([
      projectChoices(ctx),
      soldModels(),
      writer ? getAll<Volume>("volumes") : Promise.resolve([]),
    ]);
  } catch (e) {
    root.replaceChildren(errorNotice(e));
    return;
  }
  const projectName = new Map(projects.map((p) => [p.project.id, p.project.name]));
  const modelName = new Map(models.map((m) => [m.id, m.name]));
  const status = h("div", { "data-testid": "instance-status" });
  const list = h("section", { "data-testid": "instances-list" });
  let seq = 0;
  let polls = 0; // re-reads since the last action: the poll slows down while nothing is asked of it
  // Costs that no longer change (a job that is not its instance's latest, or any job of a stopped
  // or released instance), read once per visit to the view.
  const settled = new Map<string, JobCost>();
  // At most COST_FETCHES in flight; a request whose list has since been read again is dropped when
  // its turn comes (its cell is no longer on the page), so re-reads never queue up behind old ones.
  const fetchCost = limited(COST_FETCHES, ([id, asked]: [string, number]) =>
    asked === seq ? get<JobCost>(`jobs/${encodeURIComponent(id)}/cost`) : Promise.reject(new Error("superseded")));
  const costOf = (id: string): Promise<JobCost> => fetchCost([id, seq]);

  let polling = false; // the last list read had an instance starting or stopping
  const refresh = async (): Promise<void> => {
    const mine = ++seq;
    let instances: Instance[];
    try {
      instances = await getAll<Instance>("instances");
    } catch (e) {
      if (mine !== seq) return;
      // A failed read (a 502, a dropped connection, a 429) while instances were changing keeps
      // the last list, says why above it, and tries again later, backing off.
      const shown = list.querySelector("[data-testid='instances-table'], [data-testid='instances-empty']");
      if (polling && shown) {
        list.querySelector("[data-testid='instances-refresh-error']")?.remove();
        const note = errorNotice(e);
        note.setAttribute("data-testid", "instances-refresh-error");
        list.prepend(note);
        const wait = Math.min(POLL_MAX_MS, POLL_MS * 1.5 ** Math.max(0, polls++ - POLL_FAST));
        setTimeout(() => { if (root.isConnected && mine === seq) void refresh(); }, wait);
      } else {
        list.replaceChildren(errorNotice(e));
      }
      return;
    }
    if (mine !== seq || !root.isConnected) return;
    instances.sort((a, b) => a.name.localeCompare(b.name) || a.tenant_id.localeCompare(b.tenant_id));
    // Each row's own cell (names are unique within a tenant only: an operator's list can hold two).
    const costCells = new Map(instances.map((i) => [i, h("span", { "data-testid": "instance-cost-so-far" }, t("common.loading"))]));
    list.replaceChildren(
      h("h2", {}, `${t("instances.list")} `, h("small", {}, t("common.count", { n: instances.length }))),
      instances.length === 0
        ? h("p", { class: "muted", "data-testid": "instances-empty" }, t("instances.none"))
        : table(
          "instances-table",
          [t("instances.col.name"), t("jobs.col.tenant"), t("instances.col.state"), t("instances.col.gpus"), t("instances.col.cost_per_hour"),
            t("instances.col.cost_so_far"), t("instances.col.utilization"), t("instances.col.access"), writer ? t("instances.col.actions") : null],
          instances.map((i) => [
            h("div", {}, h("strong", {}, i.name), h("div", { class: "muted" }, projectName.get(i.project_id) ?? i.project_id),
              volumesLine(i)),
            tenantName(ctx, i.tenant_id),
            stateCell(i),
            gpusCell(i, modelName),
            costPerHourCell(i),
            costCells.get(i)!,
            utilizationCell(i),
            accessCell(i),
            writer ? actionsCell(i) : null,
          ]),
          instances.map((i) => i.name),
        ),
    );
    // What each instance's starts have cost, filled in as the answers come.
    for (const [i, cell] of costCells)
      void costSoFar(i, settled, costOf).then((c) => replace(cell, ...c)).finally(() => cell.setAttribute("data-loaded", ""));
    polling = instances.some((i) => TRANSITIONAL.has(i.state));
    if (polling) {
      const wait = Math.min(POLL_MAX_MS, POLL_MS * 1.5 ** Math.max(0, polls++ - POLL_FAST));
      setTimeout(() => { if (root.isConnected && mine === seq) void refresh(); }, wait);
    }
  };

  /** Runs an action, says how it went, and reads the list again. */
  const act = async (what: () => Promise<unknown>, done: string): Promise<void> => {
    status.replaceChildren(notice("info", t("common.loading")));
    try {
      await what();
      status.replaceChildren(notice("info", done, "instance-done"));
    } catch (e) {
      status.replaceChildren(problemNotice(e, "instance-error"));
    }
    polls = 0;
    await refresh();
  };

  function actionsCell(i: Instance): HTMLElement {
    const button = (label: Key, testid: string, onClick: () => void) => {
      const b = h("button", { type: "button", "data-testid": testid }, t(label));
      b.addEventListener("click", () => {
        b.disabled = true;
        onClick();
      });
      return b;
    };
    const path = `instances/${encodeURIComponent(i.id)}`;
    if (i.state === "released") return h("div", { class: "actions" }); // kept to be read, not used
    return h(
      "div",
      { class: "actions" },
      // Stopping: its container is still going; neither a start nor a stop until it has.
      i.state === "stopped"
        ? button("instances.start", "instance-start", () => void start(i))
        : i.state === "stopping" ? null
        : button("instances.stop", "instance-stop", () => void act(() => post(`${path}/stop`, {}), t("instances.stopped", { name: i.name }))),
      // A stop and a start in one write; the new container waits for the old one to go.
      i.state === "running"
        ? button("instances.restart", "instance-restart", () => void act(() => post(`${path}/restart`, {}), t("instances.restarted", { name: i.name })))
        : null,
      // Its running container (system disk, not its volume) as an image of the tenant: the server
      // answers at once (saving); the image is ready once the node has saved it.
      i.state === "running"
        ? button("instances.save", "instance-save", () => {
          const name = window.prompt(t("instances.save.prompt", { name: i.name }), `${i.name}-image`);
          if (name === null || name.trim() === "") {
            void refresh(); // the button comes back
            return;
          }
          void act(() => post(`${path}/image`, { name: name.trim() }), t("instances.saving", { name: i.name, image: name.trim() }));
        })
        : null,
      button("instances.release", "instance-release", () => {
        if (!window.confirm(t("instances.release.confirm", { name: i.name, volume: i.volume?.name ?? "—" }))) {
          void refresh(); // the button comes back
          return;
        }
        void act(() => del(path), t("instances.released", { name: i.name }));
      }),
    );
  }

  /**
   * Starts a stopped instance: back to its last host when that host's GPUs are free. When they
   * are not, the server refuses before anything is billed (host_busy, with its preflight's advice)
   * and the page offers the three ways on: wait for the host, another host, CPU-only.
   */
  async function start(i: Instance, on?: string): Promise<void> {
    status.replaceChildren(notice("info", t("common.loading")));
    try {
      await post(`instances/${encodeURIComponent(i.id)}/start`, on ? { on } : {});
      status.replaceChildren(notice("info", t("instances.started", { name: i.name }), "instance-done"));
    } catch (e) {
      const box = problemNotice(e, "instance-error");
      if (e instanceof ApiError && e.code === "api.instances.host_busy")
        box.append(
          h("p", {}, t("instances.preflight.title")),
          h("div", { class: "actions", "data-testid": "instance-start-options" },
            ...(["same_host", "any_host", "cpu_only"] as const).map((o) => {
              const b = h("button", { type: "button", "data-testid": `instance-start-${o}` }, t(`instances.on.${o}`));
              b.addEventListener("click", () => void start(i, o));
              return b;
            })),
        );
      status.replaceChildren(box);
    }
    polls = 0; // read again every 2 s while it starts, as after a stop
    await refresh();
  }

  root.replaceChildren(
    h("h2", {}, t("nav.instances")),
    h("p", { class: "muted" }, t("instances.intro")),
    writer ? createForm(projects, models, volumes, async (body, name) => {
      await act(() => post("instances", body), t("instances.created", { name }));
    }) : h("p", { class: "muted", "data-testid": "instances-read-only" }, t("instances.read_only")),
    status,
    list,
  );
  await refresh();
}

function stateCell(i: Instance): HTMLElement {
  const why = i.state === "stopped" || i.state === "stopping" || i.state === "released"
    ? renderMessage(i.stop_reason_message, i.stop_reason ?? "")
    : i.state === "requested" ? renderMessage(i.current_job?.reason_message, i.current_job?.reason ?? "") : "";
  return h(
    "div",
    {},
    h("span", { class: `badge state-${i.state}`, "data-state": i.state, "data-testid": "instance-state" }, instanceState(i.state)),
    why ? h("div", { class: "reason", "data-testid": "instance-reason" }, why) : null,
    i.release_at ? h("div", { class: "muted", "data-testid": "instance-release-at" }, `${t("instances.release_at")} `, when(i.release_at)) : null,
    i.released_at ? h("div", { class: "muted", "data-testid": "instance-released-at" }, `${t("instances.released_at")} `, when(i.released_at)) : null,
    i.stops_at ? h("div", { class: "muted", "data-testid": "instance-stops-at" }, `${t("instances.stops_at")} `, when(i.stops_at),
      i.cost_until_stop && i.cost_per_hour.currency ? h("span", {}, " · ", t("instances.cost_until_stop"), " ", cents(i.cost_until_stop, i.cost_per_hour.currency)) : null) : null,
  );
}

/** An instance state's label; a state a newer server adds shows as it is. */
function instanceState(state: string): string {
  return labelOr(`instances.state.${state}`, state);
}

function gpusCell(i: Instance, modelName: Map<string, string>): Child {
  if (i.gpus > 0) return `${i.gpus} × ${modelName.get(i.gpu_model ?? "") ?? i.gpu_model ?? "?"}`;
  const r = i.resources ?? {};
  return h("span", {}, t("instances.cpu_only"), h("div", { class: "muted" }, t("instances.cpu_shape", { cores: r.cpu_cores ?? "?", gib: r.memory_gib ?? "?" })));
}

/** A per-hour price as the API wrote it, exact, without zeros beyond the cents ("17.505000" → "17.505"). */
function perHour(amount: string, currency: string, testid: string): HTMLElement {
  const trimmed = amount.includes(".") ? amount.replace(/0+$/, "").replace(/\.(\d?)$/, (_, d: string) => `.${d.padEnd(2, "0")}`) : amount;
  return h("span", { class: "money", "data-testid": testid }, num(trimmed, amount), ` ${currency}${t("instances.per_hour")}`);
}

function costPerHourCell(i: Instance): HTMLElement {
  const c = i.cost_per_hour;
  const line = (label: Key, amount: string | null, testid: string) =>
    h("div", {}, h("span", { class: "muted" }, `${t(label)}: `), amount !== null && c.currency ? perHour(amount, c.currency, testid) : h("span", { "data-testid": testid }, "—"));
  return h(
    "div",
    { title: c.basis ? t("instances.basis", { basis: c.basis }) : undefined },
    line("instances.running", c.running, "instance-cost-running"),
    line("instances.stopped_cost", c.stopped, "instance-cost-stopped"),
  );
}

/** `fn` with at most `n` of its calls in flight; the others wait their turn, in call order. */
function limited<A, R>(n: number, fn: (a: A) => Promise<R>): (a: A) => Promise<R> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (a: A) => {
    if (running >= n) await new Promise<void>((go) => waiting.push(go)); // handed a finished call's place
    else running++;
    try {
      return await fn(a);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** Its starts' cost so far (every job it ran), per currency, to the cent; the exact sum on hover.
 * Costs that can no longer change are kept in `settled` and not asked for again. */
async function costSoFar(i: Instance, settled: Map<string, JobCost>, costOf: (id: string) => Promise<JobCost>): Promise<Child[]> {
  const latest = i.job_ids[i.job_ids.length - 1];
  const final = (id: string) => id !== latest || i.state === "stopped" || i.state === "released";
  try {
    const costs = await Promise.all(i.job_ids.map(async (id) => {
      const kept = settled.get(id);
      if (kept) return kept;
      const c = await costOf(id);
      if (final(id)) settled.set(id, c);
      return c;
    }));
    const per = new Map<string, string[]>();
    for (const c of costs) for (const [cur, x] of Object.entries(c.costs)) per.set(cur, [...(per.get(cur) ?? []), x.total]);
    // Nothing billed yet: zero in the currency it is priced in (its offer's), when it has one.
    if (per.size === 0) return [i.cost_per_hour.currency ? cents("0", i.cost_per_hour.currency) : "0.00"];
    return [...per.entries()].sort().flatMap(([cur, totals], k) => [k > 0 ? " + " : null, cents(decimalSum(totals), cur, `instance-cost-so-far-${cur}`)]);
  } catch (e) {
    return [h("span", { title: e instanceof ApiError ? e.detail : String(e) }, "—")];
  }
}

function utilizationCell(i: Instance): Child {
  if (!i.utilization) return h("span", { class: "muted", "data-testid": "instance-utilization" }, "—");
  return h("span", { "data-testid": "instance-utilization", title: i.utilization.at }, num(`${i.utilization.percent}%`), " ", h("span", { class: "muted" }, when(i.utilization.at)));
}

/** Its data disk and shared volumes, one muted line (nothing without volumes). */
function volumesLine(i: Instance): Child {
  const parts: string[] = [];
  if (i.volume) {
    const name = i.volume.size_gb === undefined ? i.volume.name : `${i.volume.name} (${i.volume.size_gb} GB)`;
    parts.push(t("instances.volume.data", { name, mount: i.volume.mount }));
  }
  for (const v of i.shared_volumes ?? [])
    parts.push(t(v.read_only ? "instances.volume.shared_ro" : "instances.volume.shared", { name: v.name, mount: v.mount }));
  return parts.length === 0 ? null : h("div", { class: "muted", "data-testid": "instance-volumes" }, parts.join(" · "));
}

function accessCell(i: Instance): Child {
  const a = i.access;
  if (!a) {
    const wants = (i.ssh_keys?.length ?? 0) > 0 || i.notebook;
    const why = !wants ? "—" : i.state !== "running" ? t("instances.access.when_running") : t("instances.access.no_containers");
    return h("span", { class: "muted", "data-testid": "instance-access-none" }, why);
  }
  return h(
    "div",
    {},
    a.ssh ? h("div", {}, h("code", { class: "ssh", "data-testid": "instance-ssh" }, a.ssh.command)) : null,
    a.notebook
      ? h("div", {}, a.notebook.url
        ? h("a", { href: a.notebook.url, target: "_blank", rel: "noopener noreferrer", "data-testid": "instance-notebook" }, t("instances.notebook.open"))
        : h("span", { class: "muted", "data-testid": "instance-notebook" }, t("instances.notebook.writers_only")))
      : null,
  );
}

type CreateBody = Record<string, unknown>;

/** The create form: the fields the API takes, each left out when empty (the server's default). */
function createForm(projects: { project: Project; label: string }[], models: GpuModel[], volumes: Volume[],
  submit: (body: CreateBody, name: string) => Promise<void>): HTMLElement {
  const name = textInput("instance-name", { placeholder: "dev-box", required: true });
  const project = select("instance-project", projects.map((p) => ({ value: p.project.id, label: p.label })));
  const gpus = numberInput("instance-gpus", 0, 16, 1);
  const model = select("instance-model", models.map((m) => ({ value: m.id, label: m.name })));
  const cores = numberInput("instance-cpu-cores", 1, 1024);
  const memory = numberInput("instance-memory", 1, 16384);
  const image = textInput("instance-image", { placeholder: t("instances.image.default") });
  const volume = h("select", { "data-testid": "instance-volume" });
  // "A new disk": made with the instance at this name and size (volume.size_gb).
  const newDiskName = textInput("instance-new-disk-name", { placeholder: "home" });
  const newDiskSize = numberInput("instance-new-disk-size", 1, 1000000);
  const newDisk = h("div", { class: "inline", hidden: true, "data-testid": "instance-new-disk" },
    labelled(t("instances.field.new_disk_name"), newDiskName), labelled(t("instances.field.new_disk_size"), newDiskSize));
  const keys = h("textarea", { rows: "2", cols: "48", spellcheck: "false", placeholder: "ssh-ed25519 AAAA… you@laptop", "data-testid": "instance-ssh-keys" });
  const notebook = h("input", { type: "checkbox", "data-testid": "instance-notebook-on" });
  const stopAfter = numberInput("instance-stop-after", 1, 44640);
  // A project's tenant's volumes only (an operator sees every tenant's projects).
  const fillVolumes = () => {
    const tenant = projects.find((p) => p.project.id === project.value)?.project.tenant_id;
    volume.replaceChildren(h("option", { value: "" }, t("instances.volume.none")),
      ...volumes.filter((v) => v.tenant_id === tenant).map((v) => h("option", { value: v.name }, `${v.name} (${v.size_gb} GB)`)),
      h("option", { value: NEW_DISK }, t("instances.volume.new")));
    newDisk.hidden = volume.value !== NEW_DISK;
  };
  volume.addEventListener("change", () => { newDisk.hidden = volume.value !== NEW_DISK; });
  const cpuOnly = () => { model.disabled = gpus.value.trim() === "0"; };
  project.addEventListener("change", fillVolumes);
  gpus.addEventListener("input", cpuOnly);
  fillVolumes();
  const button = h("button", { type: "submit", "data-testid": "instance-create" }, t("instances.create"));
  const form = h(
    "form",
    { class: "form-grid console-form", novalidate: true, "data-testid": "instance-form" },
    labelled(t("instances.field.name"), name),
    labelled(t("jobs.col.project"), project),
    labelled(t("instances.field.gpus"), gpus),
    labelled(t("instances.field.model"), model),
    labelled(t("instances.field.cpu_cores"), cores),
    labelled(t("instances.field.memory"), memory),
    labelled(t("instances.field.image"), image),
    labelled(t("instances.field.volume"), volume),
    newDisk,
    labelled(t("instances.field.ssh_keys"), keys),
    h("label", { class: "inline" }, notebook, ` ${t("instances.field.notebook")}`),
    labelled(t("instances.field.stop_after"), stopAfter),
    button,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body: CreateBody = { name: name.value.trim(), project: project.value };
    const n = intValue(gpus);
    if (n !== undefined) body.gpus = n;
    if (n !== 0) body.gpu_model = model.value;
    const res: Record<string, number> = {};
    const c = intValue(cores);
    const m = intValue(memory);
    if (c !== undefined) res.cpu_cores = c;
    if (m !== undefined) res.memory_gib = m;
    if (Object.keys(res).length > 0) body.resources = res;
    if (image.value.trim() !== "") body.image = image.value.trim();
    if (volume.value === NEW_DISK) {
      const size = intValue(newDiskSize);
      body.volume = size === undefined ? { name: newDiskName.value.trim() } : { name: newDiskName.value.trim(), size_gb: size };
    } else if (volume.value !== "") {
      body.volume = { name: volume.value };
    }
    const sshKeys = keys.value.split("\n").map((k) => k.trim()).filter((k) => k !== "");
    if (sshKeys.length > 0) body.ssh_keys = sshKeys;
    if (notebook.checked) body.notebook = true;
    const after = intValue(stopAfter);
    if (after !== undefined) body.stop_after_minutes = after;
    button.disabled = true;
    try {
      await submit(body, String(body.name));
    } finally {
      button.disabled = false;
    }
  });
  return h("details", { class: "console", open: true, "data-testid": "instance-create-section" }, h("summary", {}, t("instances.create.title")), form);
}
