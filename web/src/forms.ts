// What the console's forms share (the instance and job forms): labelled inputs, the choices they
// offer (the account's projects, the GPU models some offer sells), and how a refused request is
// shown — the server's sentence and, one per line, each field it names with its reason, so the
// user sees which input to fix. The server validates; the browser only shapes the request.

import { ApiError, get, getAll } from "./api";
import { tenantName, type ViewContext } from "./context";
import { h, notice, type Child } from "./dom";
import { t } from "./i18n";
import type { GpuModel, Offer } from "./types";
import type { Project } from "./types_dashboard";

/** An input with its label above it (style.css .form-grid). */
export function labelled(label: string, input: HTMLElement, testid?: string): HTMLLabelElement {
  return h("label", { "data-testid": testid }, label, input);
}

export function textInput(testid: string, attrs: Record<string, string | boolean | undefined> = {}): HTMLInputElement {
  return h("input", { type: "text", autocomplete: "off", spellcheck: "false", "data-testid": testid, ...attrs });
}

export function numberInput(testid: string, min: number, max: number, value?: number): HTMLInputElement {
  return h("input", { type: "number", min: String(min), max: String(max), step: "1", value: value === undefined ? undefined : String(value), "data-testid": testid });
}

/** A whole number from a number input, or undefined when it is empty (the server's default). */
export function intValue(input: HTMLInputElement): number | undefined {
  const text = input.value.trim();
  return text === "" ? undefined : Number(text);
}

/** The projects the account may submit to, by id: "<tenant> / <project>" for operators. */
export async function projectChoices(ctx: ViewContext): Promise<{ project: Project; label: string }[]> {
  const projects = await getAll<Project>("projects");
  return projects
    .map((p) => ({ project: p, label: ctx.scope.kind === "operator" ? `${tenantName(ctx, p.tenant_id)} / ${p.name}` : p.name }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

/** The catalog's GPU models that at least one offer sells, by catalog name. */
export async function soldModels(): Promise<GpuModel[]> {
  // The catalog is one answer (GET /gpu-models takes no paging parameters).
  const [catalog, offers] = await Promise.all([get<{ items: GpuModel[] }>("gpu-models"), getAll<Offer>("offers")]);
  const sold = new Set(offers.map((o) => o.gpu_model));
  return catalog.items.filter((m) => sold.has(m.id)).sort((a, b) => a.name.localeCompare(b.name));
}

export function select(testid: string, options: { value: string; label: string }[], chosen?: string): HTMLSelectElement {
  return h("select", { "data-testid": testid }, ...options.map((o) => h("option", { value: o.value, selected: o.value === chosen }, o.label)));
}

/**
 * A refused request: the server's sentence (in the dashboard's language: the request carried it),
 * then each field the problem names with its reason.
 */
export function problemNotice(e: unknown, testid: string): HTMLElement {
  if (!(e instanceof ApiError)) return notice("error", String(e), testid);
  const head: Child = e.status === 403 ? t("common.forbidden_view", { detail: e.detail }) : t("common.error", { status: e.status, detail: e.detail });
  return h(
    "div",
    { class: "notice error", role: "alert", "data-testid": testid },
    h("p", {}, head),
    e.fields.length === 0 ? null : h("ul", { class: "field-errors" }, ...e.fields.map((f) => h("li", { "data-field": f.field }, h("code", {}, f.field), `: ${f.reason}`))),
  );
}
