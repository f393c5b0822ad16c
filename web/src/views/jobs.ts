// "Queue & jobs": GET /api/v1/jobs grouped by state — pending jobs with the scheduler's
// reason, running/admitted jobs with their placement (node, GPU indices or share, NVLink
// domain), the runs the scheduler preempted or requeued in the last 7 days (GET
// /api/v1/allocations, closed runs whose end reason says so), and the rest changed in the last 7
// days with their final reason. Older finished jobs and runs are not read (updated_since). Those who may submit jobs
// get a form above them (POST /api/v1/jobs); a submitted job's name comes back as `submitted`
// in the address, so the notice survives the view reading the queue again.

import { getAll, post } from "../api";
import { mayWriteJobs, tenantName, type ViewContext } from "../context";
import { h, notice, num, replace, table, when } from "../dom";
import { intValue, labelled, numberInput, problemNotice, projectChoices, select, soldModels, textInput } from "../forms";
import { labelOr, renderMessage, stateLabel, t } from "../i18n";
import type { Allocation, GpuModel, Job, NodeInfo, Placement } from "../types";
import type { Project } from "../types_dashboard";
import { errorNotice } from "./errors";

const RECENT_DAYS = 7;
const STATE_ORDER = ["pending", "admitted", "running", "preempted", "succeeded", "failed", "cancelled"];
const ACTIVE_STATES = ["pending", "admitted", "running"];

export async function renderJobs(root: HTMLElement, ctx: ViewContext): Promise<void> {
  const since = new Date(Date.now() - RECENT_DAYS * 86_400_000).toISOString();
  // The queue whatever its age, and every other job changed in the last week (one list, by id).
  let jobs: Job[];
  try {
    const lists = await Promise.all([
      ...ACTIVE_STATES.map((state) => getAll<Job>("jobs", { state })),
      getAll<Job>("jobs", { updated_since: since }),
    ]);
    const byId = new Map<string, Job>();
    // A job that changed state between the reads is in two of them: the later record stands.
    for (const j of lists.flat()) {
      const seen = byId.get(j.id);
      if (!seen || j.status.updated_at > seen.status.updated_at) byId.set(j.id, j);
    }
    jobs = [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  } catch (e) {
    root.replaceChildren(errorNotice(e));
    return;
  }
  // Runs the scheduler ended by preemption or requeue in the last week (the ledger keeps one
  // record per run; a closed run's record was last written when it closed); unreadable, the
  // section says so and the rest of the view stands.
  let interrupted: Allocation[] = [];
  let interruptedError: HTMLElement | null = null;
  try {
    interrupted = (await getAll<Allocation>("allocations", { state: "closed", updated_since: since }))
      .filter((a) => isInterruption(a) && (a.ended_at ?? "") >= since)
      .sort((a, b) => (b.ended_at ?? "").localeCompare(a.ended_at ?? "") || a.id.localeCompare(b.id));
  } catch (e) {
    interruptedError = errorNotice(e);
  }
  // Node names make placements readable; without them the ids are still exact.
  const nodes = new Map<string, string>();
  try {
    for (const n of await getAll<NodeInfo>("nodes")) nodes.set(n.id, n.name);
  } catch {
    /* nodes unreadable: show ids */
  }
  // A job names its project as its submitter did: by name, or by id (an instance's jobs do).
  const projectNames = new Map<string, string>();
  try {
    for (const p of await getAll<Project>("projects")) projectNames.set(p.id, p.name);
  } catch {
    /* projects unreadable: show the references as they are */
  }
  const projectOf = (j: Job) => projectNames.get(j.project) ?? j.project;

  const byState = new Map<string, Job[]>();
  for (const job of jobs) {
    const list = byState.get(job.status.state) ?? [];
    list.push(job);
    byState.set(job.status.state, list);
  }
  const states = [...byState.keys()].sort((a, b) => rank(a) - rank(b));
  const summary = h(
    "div",
    { class: "cards", "data-testid": "jobs-summary" },
    ...states.map((s) =>
      h("div", { class: `card state-${s}`, "data-state": s }, h("span", { class: "card-value" }, String(byState.get(s)!.length)), h("span", { class: "card-label" }, stateLabel(s))),
    ),
  );

  // Workers × GPUs per worker, as the CLI writes a job's shape ("4×8"; a share of one card "1×500m").
  const gpus = (j: Job) =>
    j.gpu_milli != null ? `${j.workers ?? 1}×${j.gpu_milli}m` : j.gpus_per_worker == null ? "—" : `${j.workers ?? 1}×${j.gpus_per_worker}`;
  const pending = byState.get("pending") ?? [];
  const placed = [...(byState.get("admitted") ?? []), ...(byState.get("running") ?? [])];
  const other = jobs.filter((j) => !ACTIVE_STATES.includes(j.status.state));

  const section = (title: string, testid: string, list: Job[], headers: string[], row: (j: Job) => (Node | string)[]) =>
    h(
      "section",
      { "data-testid": testid },
      h("h2", {}, `${title} `, h("small", {}, t("common.count", { n: list.length }))),
      list.length === 0 ? h("p", { class: "muted" }, t("common.none")) : table(`${testid}-table`, headers, list.map(row), list.map((j) => j.name)),
    );

  // The form needs the projects and the models on sale; without them it is left out, the queue stays.
  let form: HTMLElement | null = null;
  if (mayWriteJobs(ctx)) {
    try {
      const [projects, models] = await Promise.all([projectChoices(ctx), soldModels()]);
      form = submitForm(projects, models, (name) => ctx.navigate({ submitted: name }));
    } catch (e) {
      form = errorNotice(e);
    }
  }
  // Said only of a job in the list: a link with any other text in it says nothing.
  const submitted = jobs.find((j) => j.name === ctx.query.get("submitted"))?.name;
  replace(
    root,
    submitted ? notice("info", t("jobs.submitted", { name: submitted }), "job-submitted") : null,
    form,
    h("h2", {}, t("jobs.summary")),
    summary,
    section(t("jobs.pending"), "jobs-pending", pending,
      [t("jobs.col.name"), t("jobs.col.tenant"), t("jobs.col.project"), t("jobs.col.kind"), t("jobs.col.shape"), t("jobs.col.reason"), t("jobs.col.updated")],
      (j) => [h("strong", {}, j.name), tenantName(ctx, j.tenant_id), projectOf(j), kindLabel(j.kind), num(gpus(j)), h("span", { class: "reason" }, reasonOf(j)), when(j.status.updated_at)]),
    section(t("jobs.running"), "jobs-running", placed,
      [t("jobs.col.name"), t("jobs.col.tenant"), t("jobs.col.project"), t("jobs.col.kind"), t("jobs.col.state"), t("jobs.col.placement")],
      (j) => [h("strong", {}, j.name), tenantName(ctx, j.tenant_id), projectOf(j), kindLabel(j.kind), badge(j.status.state), placementList(j.status.placement, nodes)]),
    h("section", { "data-testid": "jobs-interrupted" },
      h("h2", {}, `${t("jobs.interrupted")} `, h("small", {}, t("common.count", { n: interrupted.length }))),
      h("p", { class: "muted" }, t("jobs.interrupted.note")),
      interruptedError ?? (interrupted.length === 0
        ? h("p", { class: "muted" }, t("common.none"))
        : table("jobs-interrupted-table",
          [t("jobs.col.name"), t("jobs.col.tenant"), t("jobs.col.run"), t("jobs.col.ended"), t("jobs.col.placement"), t("jobs.col.reason")],
          interrupted.map((a) => [h("strong", {}, a.job), tenantName(ctx, a.tenant_id), when(a.running_at), a.ended_at ? when(a.ended_at) : "—",
            a.placement.map((p) => `${p.node} [${p.gpus.join(", ")}]`).join("; "), h("span", { class: "reason", title: a.end_reason }, withNodeNames(renderMessage(a.end_reason_message, a.end_reason), nodes))]),
          interrupted.map((a) => a.id)))),
    section(t("jobs.other"), "jobs-other", other,
      [t("jobs.col.name"), t("jobs.col.tenant"), t("jobs.col.project"), t("jobs.col.state"), t("jobs.col.reason"), t("jobs.col.updated")],
      (j) => [h("strong", {}, j.name), tenantName(ctx, j.tenant_id), projectOf(j), badge(j.status.state), h("span", { class: "reason" }, reasonOf(j)), when(j.status.updated_at)]),
  );
}

/** A job's reason in the current language (the server's English text when it sent no code). */
function reasonOf(j: Job): string {
  return renderMessage(j.status.reason_message, j.status.reason ?? "");
}

/** The codes of the reasons a run ends with when the scheduler preempts or requeues its job, or a
 * failed node takes a replica (src/sched, src/server/services/executor_slurm.cc). */
const INTERRUPTION_CODES = new Set([
  "sched.preempted_by", "sched.spot.preempted", "sched.requeued", "sched.requeued.placement_invalid",
  "sched.requeued_retry", "sched.replica_lost", "exec.slurm.refused", "exec.local.refused",
]);

/** A run the scheduler ended to preempt or requeue its job, or a replica a failed node took: by
 * its reason's code (the text is in the request's language: 简体中文 reads "被作业 … 抢占"), else,
 * for a run closed before codes, by the English text. */
export function isInterruption(a: Allocation): boolean {
  if (a.end_reason_message?.code) return INTERRUPTION_CODES.has(a.end_reason_message.code);
  return ["preempted", "requeued", "replica lost"].some((p) => a.end_reason.startsWith(p));
}

/** A scheduler reason with the node ids it names ("node nod_…") replaced by the nodes' names. */
function withNodeNames(reason: string, nodes: Map<string, string>): string {
  return reason.replace(/\bnod_[0-9a-f]+\b/g, (id) => nodes.get(id) ?? id);
}

function rank(state: string): number {
  const i = STATE_ORDER.indexOf(state);
  return i < 0 ? STATE_ORDER.length : i;
}

function badge(state: string): HTMLElement {
  return h("span", { class: `badge state-${state}`, "data-state": state }, stateLabel(state));
}

function placementList(placement: Placement[], nodes: Map<string, string>): HTMLElement {
  return h(
    "ul",
    { class: "placement" },
    ...placement.map((p) => {
      const parts: string[] = [`${t("jobs.placement.node")} ${nodes.get(p.node) ?? p.node}`];
      if (p.gpus.length > 0) parts.push(`${t("jobs.placement.gpus")} [${p.gpus.join(", ")}]`);
      if (p.gpu_milli !== undefined) parts.push(`${t("jobs.placement.share")} ${p.gpu_milli}‰`);
      if (p.nvlink_domain) parts.push(`${t("jobs.placement.domain")} ${p.nvlink_domain}`);
      return h("li", { "data-node": p.node }, h("span", { class: "muted" }, `${t("jobs.placement.replica", { r: p.replica, w: p.worker })}: `), parts.join(" · "));
    }),
  );
}

/**
 * Submit a job: the fields most jobs need (name, project, kind, workers × GPUs of a model, image,
 * command, expected hours); each left out when empty, so the server's defaults and checks apply.
 * The API takes far more (docs/resources/jobs.md): the CLI and YAML files are the way to it.
 */
function submitForm(projects: { project: Project; label: string }[], models: GpuModel[], done: (name: string) => void): HTMLElement {
  const name = textInput("job-name", { placeholder: "llama3-8b-sft", required: true });
  const project = select("job-project", projects.map((p) => ({ value: p.project.id, label: p.label })));
  const kind = select("job-kind", ["training", "batch", "debug"].map((k) => ({ value: k, label: kindLabel(k) })));
  const workers = numberInput("job-workers", 1, 1024, 1);
  const gpus = numberInput("job-gpus", 0, 16, 1);
  const model = select("job-model", [{ value: "", label: t("jobs.field.model.any") }, ...models.map((m) => ({ value: m.id, label: m.name }))]);
  const image = textInput("job-image", { placeholder: "nvcr.io/nvidia/pytorch:24.05-py3" });
  const command = h("textarea", { rows: "3", cols: "32", spellcheck: "false", placeholder: "torchrun\n--nproc-per-node=8\ntrain.py", "data-testid": "job-command" });
  const hours = numberInput("job-hours", 1, 744);
  const button = h("button", { type: "submit", "data-testid": "job-submit" }, t("jobs.submit"));
  const status = h("div", { "data-testid": "job-submit-status" });
  const form = h(
    "form",
    { class: "form-grid console-form", novalidate: true, "data-testid": "job-form" },
    labelled(t("instances.field.name"), name),
    labelled(t("jobs.col.project"), project),
    labelled(t("jobs.field.kind"), kind),
    labelled(t("jobs.field.workers"), workers),
    labelled(t("jobs.field.gpus"), gpus),
    labelled(t("jobs.field.model"), model),
    labelled(t("jobs.field.image"), image),
    labelled(t("jobs.field.command"), command),
    labelled(t("jobs.field.hours"), hours),
    button,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body: Record<string, unknown> = { name: name.value.trim(), project: project.value, kind: kind.value };
    const w = intValue(workers);
    const g = intValue(gpus);
    const hrs = intValue(hours);
    if (w !== undefined) body.workers = w;
    if (g !== undefined) body.gpus_per_worker = g;
    if (model.value !== "") body.constraints = { gpu_models: [model.value] };
    if (image.value.trim() !== "") body.image = image.value.trim();
    // One argument per line, as typed: argv, not a shell line (spaces stay inside an argument).
    const argv = command.value.split("\n").map((a) => a.replace(/\r$/, ""));
    while (argv.length > 0 && argv[argv.length - 1].trim() === "") argv.pop();
    if (argv.length > 0) body.command = argv;
    if (hrs !== undefined) body.expected_duration_seconds = hrs * 3600;
    button.disabled = true;
    status.replaceChildren();
    try {
      await post("jobs", body);
      done(String(body.name));
    } catch (e) {
      status.replaceChildren(problemNotice(e, "job-submit-error"));
      button.disabled = false;
    }
  });
  return h("details", { class: "console", "data-testid": "job-submit-section" }, h("summary", {}, t("jobs.submit.title")), form, status);
}

/** A job's kind in the reader's language (the API's identifier where the catalogue has none). */
function kindLabel(kind: string): string {
  return labelOr(`jobs.kind.${kind}`, kind);
}
