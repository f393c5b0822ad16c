// The dashboard shell: sign-in with an API token, the header (scope, language, sign-out),
// the nav bar, and hash routing (#/jobs?submitted=…, #/instances, #/utilization?days=…&supplier=…&node=…&project=…,
// #/costs?days=…&tenant=…, #/costperf?…&sort=…, #/invoices?month=…&tenant=…, #/offers,
// #/market?gpu_model=…&region=…&starts_at=…&ends_at=…&currency=…&index_days=…, #/suppliers?days=…,
// #/alerts, #/truecost).

import "./style.css";
import { ApiError, clearToken, getAll, request, storedToken, storeToken, TOKEN_PATTERN } from "./api";
import { disposeCharts } from "./charts";
import type { Scope, ViewContext } from "./context";
import { h, notice } from "./dom";
import { lang, languages, setLang, t, type Key } from "./i18n";
import type { Me, Tenant } from "./types";
import { renderAlerts } from "./views/alerts";
import { renderCostPerf } from "./views/costperf";
import { errorNotice } from "./views/errors";
import { renderCosts } from "./views/costs";
import { renderInstances } from "./views/instances";
import { renderInvoices } from "./views/invoices";
import { renderJobs } from "./views/jobs";
import { renderMarket } from "./views/market";
import { renderOffers } from "./views/offers";
import { renderSuppliers } from "./views/suppliers";
import { renderTrueCost } from "./views/truecost";
import { renderUtilization } from "./views/utilization";

type ViewName = "jobs" | "instances" | "utilization" | "costs" | "costperf" | "invoices" | "offers" | "market" | "suppliers" | "alerts" | "truecost";
// `tenantData`: the view reads tenants' jobs, costs or alerts, which supplier accounts may not
// (the API answers 403): their nav leaves it out and its address opens their first view.
const VIEWS: Record<ViewName, { label: Key; render: (root: HTMLElement, ctx: ViewContext) => Promise<void>; tenantData?: true }> = {
  jobs: { label: "nav.jobs", render: renderJobs, tenantData: true },
  instances: { label: "nav.instances", render: renderInstances, tenantData: true },
  utilization: { label: "nav.utilization", render: renderUtilization },
  costs: { label: "nav.costs", render: renderCosts, tenantData: true },
  costperf: { label: "nav.costperf", render: renderCostPerf, tenantData: true },
  invoices: { label: "nav.invoices", render: renderInvoices, tenantData: true },
  offers: { label: "nav.offers", render: renderOffers },
  market: { label: "nav.market", render: renderMarket },
  suppliers: { label: "nav.suppliers", render: renderSuppliers },
  alerts: { label: "nav.alerts", render: renderAlerts, tenantData: true },
  truecost: { label: "nav.truecost", render: renderTrueCost },
};

/** The views this account may open, in nav order. */
function viewsFor(scope: Scope | undefined): ViewName[] {
  return (Object.keys(VIEWS) as ViewName[]).filter((v) => !(scope?.kind === "supplier" && VIEWS[v].tenantData));
}

interface Session {
  scope: Scope;
  tenants: Map<string, Tenant>;
}

const app = document.getElementById("app")!;
let session: Session | null = null;
let renderSeq = 0; // a newer render supersedes a slower older one

/**
 * Learns the account's scope from GET /me, which also proves the token works: the user's role
 * and tenant as requests act now (a promoted or demoted user's old token included), so the
 * write buttons shown are those the server will honour. A tenant member submits jobs as admins do.
 */
async function loadSession(token: string): Promise<Session> {
  const me = await request<Me>("GET", "me", { token });
  let scope: Scope;
  if (me.role === "operator_admin") scope = { kind: "operator" };
  else if (me.role === "supplier" || !me.tenant_id) scope = { kind: "supplier" };
  else {
    const admin = me.role === "tenant_admin";
    scope = { kind: "tenant", tenantId: me.tenant_id, admin, writer: admin || me.role === "tenant_member" };
  }
  const tenants = new Map<string, Tenant>();
  if (scope.kind !== "supplier") for (const x of await getAll<Tenant>("tenants", {}, token)) tenants.set(x.id, x);
  return { scope, tenants };
}

function parseHash(scope: Scope): { view: ViewName; query: URLSearchParams } {
  const [path, qs] = location.hash.replace(/^#\/?/, "").split("?", 2);
  const allowed = viewsFor(scope);
  const view = allowed.includes(path as ViewName) ? (path as ViewName) : allowed[0];
  return { view, query: new URLSearchParams(qs ?? "") };
}

function languageSelect(): HTMLSelectElement {
  const select = h(
    "select",
    { "data-testid": "lang-select", "aria-label": t("lang.label") },
    ...languages().map((l) => h("option", { value: l.tag, selected: lang() === l.tag }, l.name)),
  );
  select.addEventListener("change", () => {
    setLang(select.value);
    render();
  });
  return select;
}

function renderLogin(message?: string): void {
  disposeCharts();
  const input = h("input", { type: "password", id: "token", autocomplete: "off", spellcheck: "false", "data-testid": "login-token", placeholder: "gpr_…" });
  const status = h("div", { "data-testid": "login-status" }, message ? notice("error", message, "login-error") : null);
  const button = h("button", { type: "submit", "data-testid": "login-submit" }, t("login.submit"));
  const form = h(
    "form",
    { class: "login", "data-testid": "login-form" },
    h("h2", {}, t("login.title")),
    h("p", { class: "muted" }, t("login.help")),
    h("label", { for: "token" }, t("login.token")),
    input,
    button,
    status,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const token = input.value.trim();
    if (!TOKEN_PATTERN.test(token)) {
      status.replaceChildren(notice("error", t("login.bad_format"), "login-error"));
      return;
    }
    button.disabled = true;
    status.replaceChildren(notice("info", t("login.checking")));
    try {
      session = await loadSession(token);
      storeToken(token);
      render();
    } catch (e) {
      button.disabled = false;
      status.replaceChildren(notice("error", loginError(e), "login-error"));
    }
  });
  app.replaceChildren(header(false), h("main", { class: "narrow" }, form));
  input.focus();
}

function loginError(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 401) return t("login.rejected");
    if (e.status === 0) return t("login.unreachable");
    return t("common.error", { status: e.status, detail: e.detail });
  }
  return String(e);
}

function scopeLabel(s: Session): string {
  if (s.scope.kind === "operator") return t("scope.operator");
  if (s.scope.kind === "supplier") return t("scope.supplier");
  const tenant = s.tenants.get(s.scope.tenantId);
  return t("scope.tenant", { name: tenant?.display_name ? `${tenant.name} (${tenant.display_name})` : tenant?.name ?? s.scope.tenantId });
}

function header(signedIn: boolean, active?: ViewName): HTMLElement {
  const right = h("div", { class: "header-right" }, h("label", {}, `${t("lang.label")} `, languageSelect()));
  if (signedIn && session) {
    const logout = h("button", { type: "button", class: "link", "data-testid": "logout" }, t("nav.logout"));
    logout.addEventListener("click", () => {
      clearToken();
      session = null;
      location.hash = "";
      render();
    });
    right.prepend(h("span", { class: "scope", "data-testid": "scope" }, scopeLabel(session)));
    right.append(logout);
  }
  const nav = signedIn
    ? h("nav", {}, ...viewsFor(session?.scope).map((v) =>
        h("a", { href: `#/${v}`, class: v === active ? "active" : undefined, "data-testid": `nav-${v}`, "aria-current": v === active ? "page" : undefined }, t(VIEWS[v].label))))
    : null;
  return h("header", {}, h("div", { class: "brand" }, h("h1", {}, t("app.title")), h("span", { class: "muted" }, t("app.subtitle"))), nav, right);
}

async function render(): Promise<void> {
  document.documentElement.lang = lang();
  document.title = `${t("app.title")} — ${t("app.subtitle")}`;
  const token = storedToken();
  if (!token) {
    renderLogin();
    return;
  }
  const seq = ++renderSeq;
  if (!session) {
    app.replaceChildren(header(false), h("main", {}, h("p", { class: "muted" }, t("common.loading"))));
    try {
      session = await loadSession(token);
    } catch (e) {
      if (seq !== renderSeq) return;
      if (e instanceof ApiError && e.status === 401) clearToken();
      renderLogin(loginError(e));
      return;
    }
    if (seq !== renderSeq) return;
  }
  const { view, query } = parseHash(session.scope);
  disposeCharts();
  const main = h("main", { "data-testid": `view-${view}`, "data-loading": "true" }, h("p", { class: "muted" }, t("common.loading")));
  app.replaceChildren(header(true, view), main);
  const ctx: ViewContext = {
    scope: session.scope,
    tenants: session.tenants,
    query,
    navigate: (next) => {
      const hash = `#/${view}?${new URLSearchParams(next).toString()}`;
      if (location.hash === hash) void render(); // same address: no hashchange, reload anyway
      else location.hash = hash;
    },
    // Through render(): the old charts are disposed and a newer render wins over a slower one.
    reload: () => void render(),
  };
  try {
    await VIEWS[view].render(main, ctx);
  } catch (e) {
    // A view that fails (e.g. an answer a newer server shaped differently) says so instead of
    // leaving the page "loading".
    main.replaceChildren(errorNotice(e));
    console.error(e);
  }
  if (seq !== renderSeq) return; // the user moved on meanwhile; this main is detached
  main.removeAttribute("data-loading");
}

window.addEventListener("hashchange", () => void render());
// A request refused with 401 mid-session (api.ts): the token is forgotten and sign-in shown, saying why.
window.addEventListener("gpurent:unauthorized", (e) => {
  const { error, token } = (e as CustomEvent<{ error: unknown; token: string }>).detail;
  // A late answer for a token already replaced (signed in again meanwhile) changes nothing.
  if (!storedToken() || storedToken() !== token) return;
  clearToken();
  session = null;
  ++renderSeq; // a render in flight no longer draws over the sign-in page
  renderLogin(loginError(error));
});
setLang(lang());
void render();
