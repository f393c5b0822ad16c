// The period and filter controls shared by the dashboard views: a "last N days" choice kept in
// the location hash (?days=7) and turned into an explicit RFC 3339 [from, to) — `to` rounded up
// to the next whole hour (utilization) or UTC midnight (costs, days), as the API's defaults are,
// and sent with `from` so a boundary passing between page and server cannot stretch the range.

import type { ViewContext } from "../context";
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

export function periodSelect(ctx: ViewContext): HTMLLabelElement {
  return filterSelect(
    ctx,
    "days",
    t("period.label"),
    PERIOD_DAYS.map((d) => ({ value: String(d), label: d === 1 ? t("period.day") : t("period.days", { n: d }) })),
    null,
    String(periodDays(ctx)),
  );
}
