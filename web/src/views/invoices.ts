// "Invoices": GET /api/v1/invoices?month=YYYY-MM&tenant=… — totals per currency, then one
// section per contract with its lines and totals. Amounts are the server's decimal strings.
// The tenant selector lists GET /api/v1/tenants: every tenant for an operator, only its own
// for a tenant user (who may also name it). Month and tenant live in the location hash; the month
// is picked with a year and a month select named in the dashboard's language (an <input
// type=month> would follow the browser's locale instead).

import { get } from "../api";
import type { ViewContext } from "../context";
import { h, num, replace, table } from "../dom";
import { instantText, monthNames, monthText, utcText } from "../dates";
import { labelOr, t } from "../i18n";
import type { Invoice } from "../types";
import { errorNotice } from "./errors";

// A line's unit in the reader's language (the API's words; one it does not know stays as it is).
const UNIT_KEYS: Record<string, string> = {
  "GPU-second": "gpu_second", "GPU-hour": "gpu_hour", GB: "gb", "GB-second": "gb_second", "GB-month (730 h)": "gb_month",
  "QPS-second": "qps_second", "QPS-month (730 h)": "qps_month", request: "request", requests: "requests", token: "token",
  tokens: "tokens", "of fee": "of_fee", "of credit": "of_credit",
};
function unitText(unit: string): string {
  const key = UNIT_KEYS[unit];
  return key ? labelOr(`invoices.unit.${key}`, unit) : unit;
}

function currentMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

const YEARS_BACK = 5; // the year select offers this many years before the current one (and the chosen one)

/** The month picker: a year select and a month select; `value()` reads "YYYY-MM". */
function monthPicker(month: string): { el: HTMLElement; value: () => string } {
  const [year, mon] = /^\d{4}-\d{2}$/.test(month) ? month.split("-").map(Number) : currentMonth().split("-").map(Number);
  const thisYear = new Date().getUTCFullYear();
  const years = [...new Set([thisYear + 1, ...Array.from({ length: YEARS_BACK + 1 }, (_, i) => thisYear - i), year])].sort((a, b) => b - a);
  const yearSelect = h("select", { "data-testid": "invoice-month-year", "aria-label": t("invoices.year") },
    ...years.map((y) => h("option", { value: String(y), selected: y === year }, t("invoices.year_option", { year: y }))));
  const monthSelect = h("select", { "data-testid": "invoice-month-month", "aria-label": t("invoices.month") },
    ...monthNames().map((name, i) => h("option", { value: String(i + 1).padStart(2, "0"), selected: i + 1 === mon }, name)));
  return {
    el: h("span", { class: "month-picker", "data-testid": "invoice-month" }, yearSelect, " ", monthSelect),
    value: () => `${yearSelect.value}-${monthSelect.value}`,
  };
}

export async function renderInvoices(root: HTMLElement, ctx: ViewContext): Promise<void> {
  const tenants = [...ctx.tenants.values()].sort((a, b) => a.name.localeCompare(b.name));
  const ownTenant = ctx.scope.kind === "tenant" ? ctx.tenants.get(ctx.scope.tenantId)?.name : undefined;
  const month = ctx.query.get("month") ?? currentMonth();
  const tenant = ctx.query.get("tenant") ?? ownTenant ?? tenants[0]?.name ?? "";

  const picker = monthPicker(month);
  const select = h(
    "select",
    { "data-testid": "invoice-tenant", "aria-label": t("invoices.tenant") },
    ...tenants.map((x) => h("option", { value: x.name, selected: x.name === tenant }, x.display_name ? `${x.name} — ${x.display_name}` : x.name)),
  );
  const form = h(
    "form",
    { class: "controls" },
    h("label", {}, `${t("invoices.month")} `, picker.el),
    h("label", {}, `${t("invoices.tenant")} `, select),
    h("button", { type: "submit" }, t("invoices.show")),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    ctx.navigate({ month: picker.value(), tenant: select.value });
  });
  const body = h("div", { "data-testid": "invoice" }, h("p", { class: "muted" }, t("common.loading")));
  root.replaceChildren(form, body);

  let invoice: Invoice;
  try {
    invoice = await get<Invoice>("invoices", { month, tenant: tenant || undefined });
  } catch (e) {
    body.replaceChildren(errorNotice(e));
    return;
  }

  const totalRows = Object.entries(invoice.totals).map(([currency, x]) => [
    currency, num(x.charges), num(x.credits), h("strong", {}, num(x.total)),
  ]);
  const sections = invoice.sections.map((s, i) =>
    h(
      "section",
      { class: "invoice-section", "data-testid": `invoice-section-${i}` },
      h("h3", {}, t("invoices.section", { contract: s.contract, currency: s.currency })),
      table(
        `invoice-lines-${i}`,
        [t("invoices.col.kind"), t("invoices.col.rule"), t("invoices.col.description"), t("invoices.col.project"), t("invoices.col.job"),
         t("invoices.col.quantity"), t("invoices.col.unit_price"), t("invoices.col.amount")],
        s.lines.map((l) => [
          // The rule's name in the reader's language; the API's identifier stays in the tooltip.
          h("span", { title: l.kind }, labelOr(`invoices.kind.${l.kind}`, l.kind)),
          h("span", { title: l.rule, "data-rule": l.rule }, labelOr(`invoices.rule.${l.rule}`, l.rule)),
          h("span", { class: "description" }, l.description), l.project, l.job,
          h("span", {}, num(l.quantity), ` ${unitText(l.unit)}`),
          // "2.99 USD/GPU-hour"; a unit that is a phrase ("of fee") follows after a space.
          h("span", {}, num(l.unit_price), ` ${s.currency}${/\s/.test(l.price_unit) ? " " : "/"}${unitText(l.price_unit)}`),
          num(l.amount, l.amount_exact),
        ]),
      ),
      h("p", { class: "section-totals", "data-testid": `invoice-section-total-${i}` },
        t("invoices.section_totals", { charges: s.totals.charges, credits: s.totals.credits, total: s.totals.total, currency: s.currency })),
    ),
  );

  replace(
    body,
    h("h2", { "data-testid": "invoice-title", title: month }, `${invoice.tenant} · ${monthText(month)}`),
    h("p", { class: "muted", "data-testid": "invoice-period", title: `${utcText(invoice.period.from)} – ${utcText(invoice.period.to)}; ${utcText(invoice.rated_until)}` },
      t("invoices.period", { from: instantText(invoice.period.from), to: instantText(invoice.period.to), rated: instantText(invoice.rated_until) })),
    h("h3", {}, t("invoices.totals")),
    table("invoice-totals", [t("invoices.col.currency"), t("invoices.col.charges"), t("invoices.col.credits"), t("invoices.col.total")], totalRows, Object.keys(invoice.totals)),
    invoice.unpriced_allocations.length > 0 ? h("p", { class: "notice info" }, t("invoices.unpriced", { list: invoice.unpriced_allocations.join(", ") })) : null,
    sections.length === 0 ? h("p", { class: "muted" }, t("invoices.no_sections")) : null,
    ...sections,
  );
}
