// "Cost-performance": GET /api/v1/dashboard/cost-performance — per job that reported a quality
// metric at least twice, its gain per GPU-hour, cost and cost per unit of gain, ranked within
// each metric; the table can also be ordered by cost before credits, cost per unit gain or GPU
// utilization. A job's cost shows its charges, the GPU time a reserved commitment covered and its
// SLA credits apart, then what it was billed (charges + credits), so a refund never reads as a
// cheap (or negative-cost) run.
// Inefficient jobs are flagged with the API's own reasons (en/zh); a bar chart per metric shows
// gain per GPU-hour against the metric's median.

import { get, getAll } from "../api";
import { barChart } from "../charts";
import type { ViewContext } from "../context";
import { cents, h, money, notice, num, periodNote, replace, stat, table } from "../dom";
import { decimalCompare, decimalSum, intText, metricText } from "../format";
import { labelOr, localText, t, type Key } from "../i18n";
import type { CostParts, CostPerfJob, CostPerformance, Project } from "../types_dashboard";
import { errorNotice } from "./errors";
import { filterSelect, period, periodDays, periodSelect, projectSelect, tenantSelect } from "./period";

const SORTS: Record<string, { label: Key; compare: (a: CostPerfJob, b: CostPerfJob) => number }> = {
  gain: { label: "costperf.sort.gain", compare: (a, b) => a.rank - b.rank },
  cost: { label: "costperf.sort.cost_before_credits", compare: (a, b) => a.currency.localeCompare(b.currency) || decimalCompare(beforeCredits(a), beforeCredits(b)) },
  cost_per_gain: {
    label: "costperf.sort.cost_per_gain",
    compare: (a, b) => nullsLast(a.cost_per_unit_gain, b.cost_per_unit_gain, (x, y) => a.currency.localeCompare(b.currency) || decimalCompare(x, y)),
  },
  utilization: { label: "costperf.sort.utilization", compare: (a, b) => nullsLast(a.mean_util_pct, b.mean_util_pct, (x, y) => y - x) },
};

export async function renderCostPerf(root: HTMLElement, ctx: ViewContext): Promise<void> {
  const { from, to } = period(periodDays(ctx), "day");
  const tenant = ctx.query.get("tenant") ?? undefined;
  const sortKey = ctx.query.get("sort") ?? "gain";
  const sort = SORTS[sortKey] ?? SORTS.gain;
  const [answer, projects] = await Promise.allSettled([
    get<CostPerformance>("dashboard/cost-performance", { from, to, tenant, project: ctx.query.get("project") ?? undefined }),
    getAll<Project>("projects"),
  ]);

  const controls = h("form", { class: "controls", "data-testid": "costperf-filters" }, periodSelect(ctx, "day"));
  controls.addEventListener("submit", (ev) => ev.preventDefault());
  const tenants = tenantSelect(ctx);
  if (tenants) controls.append(tenants);
  if (projects.status === "fulfilled") controls.append(projectSelect(ctx, projects.value));
  controls.append(filterSelect(ctx, "sort", t("costperf.sort"),
    Object.entries(SORTS).map(([value, s]) => ({ value, label: t(s.label) })), null, SORTS[sortKey] ? sortKey : "gain"));

  const heading = h("h2", {}, t("costperf.title"));
  if (answer.status === "rejected") {
    root.replaceChildren(heading, controls, errorNotice(answer.reason));
    return;
  }
  const cp = answer.value;
  const metrics = [...new Set(cp.jobs.map((j) => j.metric))];
  const charts: { el: HTMLElement; jobs: CostPerfJob[]; median?: number | null }[] = [];
  const sections = metrics.map((metric) => {
    const jobs = cp.jobs.filter((j) => j.metric === metric).sort(sort.compare);
    const median = cp.median_gain_per_gpu_hour[metric];
    const chartEl = h("div", { class: "chart", "data-testid": `costperf-chart-${metric}`, style: `height:${70 + 30 * jobs.length}px` });
    // Jobs without GPU time have no ratio to draw.
    charts.push({ el: chartEl, jobs: jobs.filter((j) => j.gain_per_gpu_hour !== null).sort((a, b) => a.rank - b.rank), median });
    return h(
      "section",
      { "data-testid": `costperf-metric-${metric}` },
      h("h3", {}, t("costperf.metric", { metric, direction: t(jobs[0].higher_is_better ? "costperf.higher_better" : "costperf.lower_better") })),
      median === undefined || median === null ? null : h("p", { class: "muted" }, t("costperf.median", { value: metricText(median) })),
      flagRows(table(
        `costperf-table-${metric}`,
        [t("costperf.col.rank"), t("costperf.col.job"), t("costperf.col.project"), t("costperf.col.kind"), t("costperf.col.first_last"),
         t("costperf.col.gain"), t("costperf.col.gpu_hours"), t("costperf.col.gain_per_gpu_hour"), t("costperf.col.cost_parts"),
         t("costperf.col.cost_per_gain"), t("costperf.col.util"), t("costperf.col.flags")],
        jobs.map((j) => [
          num(String(j.rank)),
          h("strong", {}, j.job),
          j.project,
          labelOr(`jobs.kind.${j.kind}`, j.kind),
          num(`${metricText(j.first)} → ${metricText(j.last)}`),
          num(metricText(j.gain), String(j.gain)),
          num(j.gpu_hours),
          num(metricText(j.gain_per_gpu_hour), String(j.gain_per_gpu_hour)),
          costCell(j),
          j.cost_per_unit_gain === null ? "—" : cents(j.cost_per_unit_gain, j.currency),
          num(intText(j.mean_util_pct, "%")),
          j.flags.length === 0
            ? h("span", { class: "badge ok" }, t("costperf.efficient"))
            : h("span", {}, ...j.flags.map((f) => h("span", { class: "badge flag", "data-flag": f.key }, localText(f)))),
        ]),
        jobs.map((j) => j.job_id),
      ), jobs),
      h("h3", {}, t("costperf.chart", { metric })),
      chartEl,
    );
  });

  replace(
    root,
    heading,
    controls,
    periodNote((from, to) => t("costperf.period", { from, to }), cp.from, cp.to, "costperf-period"),
    h("p", { class: "muted description", "data-testid": "costperf-legend" }, t("costperf.legend")),
    h("div", { class: "cards" },
      // One entry per job and metric: a job reporting two metrics is one job.
      stat(String(new Set(cp.jobs.map((j) => j.job_id)).size), t("costperf.jobs"), "costperf-job-count"),
      stat(String(new Set(cp.jobs.filter((j) => j.inefficient).map((j) => j.job_id)).size), t("costperf.inefficient"),
        "costperf-inefficient-count",
        cp.jobs.some((j) => j.inefficient) ? "warn" : undefined)),
    cp.jobs.length === 0 ? notice("info", t("costperf.empty"), "costperf-empty") : null,
    ...sections,
  );
  for (const c of charts)
    barChart(c.el, c.jobs.map((j) => ({
      label: j.job,
      value: metricText(j.gain_per_gpu_hour),
      color: j.inefficient ? "#dc2626" : "#1d4ed8",
    })), { threshold: c.median === undefined || c.median === null ? undefined : metricText(c.median) });
}

/** A job's cost parts in its currency, then in each other currency it was billed in. */
function parts(j: CostPerfJob): CostParts[] {
  return [{ cost: j.cost, currency: j.currency, charges: j.charges, credits: j.credits, reserved_covered_value: j.reserved_covered_value },
    ...(j.other_costs ?? [])];
}

/**
 * A job's cost, one block per currency: its charges; the GPU time a reserved commitment covered
 * (when any, muted: not billed to the job); and when it has credits, the credits and the total
 * billed. A server that sends only `cost` gets it as it is.
 */
function costCell(j: CostPerfJob): HTMLElement {
  // The reserved-covered value is derived micro-exact: shown to the cent, the exact figure on hover.
  const line = (part: string, label: string, p: CostParts, amount: string, cls?: string) =>
    h("div", { class: cls, "data-part": part }, `${label} `,
      part === "reserved" ? cents(amount, p.currency) : money(amount, p.currency));
  const nonZero = (x: string | undefined): x is string => x !== undefined && decimalCompare(x, "0") !== 0;
  return h("div", { class: "cost-parts", "data-testid": "costperf-cost" }, ...parts(j).map((p) =>
    p.charges === undefined
      ? h("div", { "data-part": "cost" }, money(p.cost, p.currency))
      : h("div", { "data-currency": p.currency },
        line("charges", t("costperf.line.charges"), p, p.charges),
        nonZero(p.reserved_covered_value) ? line("reserved", t("costperf.line.reserved"), p, p.reserved_covered_value, "muted") : null,
        nonZero(p.credits) ? line("credits", t("costperf.line.credits"), p, p.credits) : null,
        nonZero(p.credits) ? line("total", t("costperf.line.total"), p, p.cost, "cost-total") : null)));
}

/** What the job's work cost before credits, in its currency (what cost per unit gain divides). */
function beforeCredits(j: CostPerfJob): string {
  return j.charges === undefined ? j.cost : decimalSum([j.charges, j.reserved_covered_value ?? "0"]);
}

function nullsLast<T>(a: T | null, b: T | null, compare: (x: T, y: T) => number): number {
  if (a === null || b === null) return (a === null ? 1 : 0) - (b === null ? 1 : 0);
  return compare(a, b);
}

/** Rows of inefficient jobs read as such at a glance (row i is jobs[i]: a job reporting two
 * metrics has a row, and its own flags, in each metric's table). */
function flagRows(tbl: HTMLElement, jobs: CostPerfJob[]): HTMLElement {
  tbl.querySelectorAll<HTMLTableRowElement>("tbody tr").forEach((tr, i) => tr.classList.toggle("inefficient", jobs[i].inefficient));
  return tbl;
}
