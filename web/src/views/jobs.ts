// "Queue & jobs": GET /api/v1/jobs grouped by state — pending jobs with the scheduler's
// reason, running/admitted jobs with their placement (node, GPU indices or share, NVLink
// domain), the runs the scheduler preempted or requeued (GET /api/v1/allocations, closed runs
// whose end reason says so), and the rest with their final reason.

import { getAll } from "../api";
import { tenantName, type ViewContext } from "../context";
import { h, num, table, when } from "../dom";
import { renderMessage, stateLabel, t } from "../i18n";
import type { Allocation, Job, NodeInfo, Placement } from "../types";
import { errorNotice } from "./errors";

const INTERRUPTED_DAYS = 7;
const STATE_ORDER = ["pending", "admitted", "running", "preempted", "succeeded", "failed", "cancelled"];

export async function renderJobs(root: HTMLElement, ctx: ViewContext): Promise<void> {
  let jobs: Job[];
  try {
    jobs = await getAll<Job>("jobs");
  } catch (e) {
    root.replaceChildren(errorNotice(e));
    return;
  }
  // Runs the scheduler ended by preemption or requeue in the last week (the ledger keeps one
  // record per run); unreadable, the section says so and the rest of the view stands.
  let interrupted: Allocation[] = [];
  let interruptedError: HTMLElement | null = null;
  const since = new Date(Date.now() - INTERRUPTED_DAYS * 86_400_000).toISOString();
  try {
    interrupted = (await getAll<Allocation>("allocations", { state: "closed" }))
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
  const other = jobs.filter((j) => !["pending", "admitted", "running"].includes(j.status.state));

  const section = (title: string, testid: string, list: Job[], headers: string[], row: (j: Job) => (Node | string)[]) =>
    h(
      "section",
      { "data-testid": testid },
      h("h2", {}, `${title} `, h("small", {}, t("common.count", { n: list.length }))),
      list.length === 0 ? h("p", { class: "muted" }, t("common.none")) : table(`${testid}-table`, headers, list.map(row), list.map((j) => j.name)),
    );

  root.replaceChildren(
    h("h2", {}, t("jobs.summary")),
    summary,
    section(t("jobs.pending"), "jobs-pending", pending,
      [t("jobs.col.name"), t("jobs.col.tenant"), t("jobs.col.project"), t("jobs.col.kind"), t("jobs.col.shape"), t("jobs.col.reason"), t("jobs.col.updated")],
      (j) => [h("strong", {}, j.name), tenantName(ctx, j.tenant_id), j.project, j.kind, num(gpus(j)), h("span", { class: "reason" }, reasonOf(j)), when(j.status.updated_at)]),
    section(t("jobs.running"), "jobs-running", placed,
      [t("jobs.col.name"), t("jobs.col.tenant"), t("jobs.col.project"), t("jobs.col.kind"), t("jobs.col.state"), t("jobs.col.placement")],
      (j) => [h("strong", {}, j.name), tenantName(ctx, j.tenant_id), j.project, j.kind, badge(j.status.state), placementList(j.status.placement, nodes)]),
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
      (j) => [h("strong", {}, j.name), tenantName(ctx, j.tenant_id), j.project, badge(j.status.state), h("span", { class: "reason" }, reasonOf(j)), when(j.status.updated_at)]),
  );
}

/** A job's reason in the current language (the server's English text when it sent no code). */
function reasonOf(j: Job): string {
  return renderMessage(j.status.reason_message, j.status.reason ?? "");
}

/** A run the scheduler ended to preempt or requeue its job, or a replica a failed node took (src/sched reasons). */
export function isInterruption(a: Allocation): boolean {
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
