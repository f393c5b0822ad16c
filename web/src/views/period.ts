// The period and filter controls shared by the dashboard views: a "last N days" choice kept in
// the location hash (?days=7) and turned into an explicit RFC 3339 [from, to) — `to` rounded up
// to the next whole hour (utilization) or UTC midnight (costs, days), as the API's defaults are,
// and sent with `from` so a boundary passing between page and server cannot stretch the range.

import type { ViewContext } from "../context";
import type { Project } from "../types_dashboard";
import { h } from "../dom";
import { t } from "../i18n";

export const PERIOD_DAYS = [1, 7, 14, 31] as const; // the API takes at most 31 days
const DEFAULT_DAYS = 7;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export function periodDays(ctx: ViewContext): number {
  const days = Number(ctx.query.get("days"));
  return (PERIOD_DAYS as readonly number[]).includes(days) ? days : DEFAULT_DAYS;
}

/** [from, to) ending at the next whole hour or UTC midnight after `now`. */
export function period(days: number, unit: "hour" | "day", now = Date.now()): { from: string; to: string } {
  const step = unit === "hour" ? HOUR_MS : DAY_MS;
  const to = Math.ceil(now / step) * step;
  return { from: new Date(to - days * DAY_MS).toISOString(), to: new Date(to).toISOString() };
}

export interface Choice {
  value: string;
  label: string;
}

/** A labelled select whose change navigates with `name` set (empty = all). */
export function filterSelect(ctx: ViewContext, name: string, label: string, choices: Choice[], all: string | null,
  current = ctx.query.get(name) ?? ""): HTMLLabelElement {
  const select = h(
    "select",
    { "data-testid": `filter-${name}`, "aria-label": label },
    ...(all === null ? [] : [h("option", { value: "", selected: current === "" }, all)]),
    ...choices.map((c) => h("option", { value: c.value, selected: c.value === current }, c.label)),
  );
  select.addEventListener("change", () => {
    const next: Record<string, string> = {};
    for (const [k, v] of ctx.query) if (k !== name) next[k] = v;
    if (select.value) next[name] = select.value;
    for (const dependent of DEPENDENTS[name] ?? []) delete next[dependent];
    ctx.navigate(next);
  });
  return h("label", {}, `${label} `, select);
}

// A narrower choice no longer holds when the wider one changes (a node of another supplier).
const DEPENDENTS: Record<string, string[]> = { supplier: ["node"], tenant: ["project"] };

/** The period choice, labelled as `period(days, unit)` reads it: hours up to the next whole hour,
 * or whole UTC days up to the end of today. */
export function periodSelect(ctx: ViewContext, unit: "hour" | "day"): HTMLLabelElement {
  const label = (d: number) =>
    unit === "hour" ? (d === 1 ? t("period.day") : t("period.days", { n: d })) : d === 1 ? t("period.today") : t("period.utc_days", { n: d });
  return filterSelect(
    ctx,
    "days",
    t("period.label"),
    PERIOD_DAYS.map((d) => ({ value: String(d), label: label(d) })),
    null,
    String(periodDays(ctx)),
  );
}

/** Operators: the tenant filter (by name); other accounts see only their own tenant, so none. */
export function tenantSelect(ctx: ViewContext): HTMLLabelElement | null {
  if (ctx.scope.kind !== "operator") return null;
  return filterSelect(ctx, "tenant", t("filter.tenant"),
    [...ctx.tenants.values()].sort((a, b) => a.name.localeCompare(b.name)).map((x) => ({ value: x.name, label: x.name })), t("filter.all"));
}

/** The project filter: the chosen tenant's projects (operators see "tenant/project"). */
export function projectSelect(ctx: ViewContext, projects: Project[]): HTMLLabelElement {
  const tenantName = (id: string) => ctx.tenants.get(id)?.name ?? id;
  const chosen = ctx.query.get("tenant");
  const choices: Choice[] = projects
    .filter((p) => !chosen || tenantName(p.tenant_id) === chosen)
    .map((p) => ({ value: p.id, label: ctx.scope.kind === "operator" ? `${tenantName(p.tenant_id)}/${p.name}` : p.name }))
    .sort((a, b) => a.label.localeCompare(b.label));
  return filterSelect(ctx, "project", t("filter.project"), choices, t("filter.all"));
}
