// "Alerts": GET /api/v1/alerts — what the cost firewall raised (card daily cost, storage I/O
// share, daily egress, budget), each figure against its threshold as the API's strings. Egress
// freezes are marked; an operator or the tenant's admin may lift an alert (POST
// /api/v1/alerts/{id}/lift, no body fields), after which the list is read again.

import { getAll } from "../api";
import { mayLiftAlerts, type ViewContext } from "../context";
import { cents, h, notice, num, replace, table, when } from "../dom";
import { instantText, utcText } from "../dates";
import { isCurrency } from "../format";
import { alertText } from "../alert_text";
import { labelOr, t } from "../i18n";
import type { Alert } from "../types";
import { errorNotice } from "./errors";
import { liftButton } from "./lift";

export async function renderAlerts(root: HTMLElement, ctx: ViewContext): Promise<void> {
  let alerts: Alert[];
  try {
    alerts = await getAll<Alert>("alerts");
  } catch (e) {
    root.replaceChildren(errorNotice(e));
    return;
  }
  // Newest first: active problems are usually the recent ones.
  alerts.sort((a, b) => b.first_seen.localeCompare(a.first_seen) || a.id.localeCompare(b.id));
  const status = h("div", { "data-testid": "alerts-status" });
  const frozen = alerts.filter((a) => a.freeze_egress && a.state === "active");
  // Projects are named per tenant (an operator reads every tenant's alerts), and each tenant sets
  // its own upload limit: one figure only when every frozen project has the same.
  const frozenProjects = new Set(frozen.map((a) => `${a.tenant}/${a.project || a.subject}`)).size;
  const limits = new Set(frozen.map((a) => a.upload_limit_bytes));
  const canLift = mayLiftAlerts(ctx);

  const lift = (a: Alert) => liftButton(a.id, ctx.reload, (e) => status.replaceChildren(errorNotice(e)));

  replace(
    root,
    h("h2", {}, t("alerts.title"), " ", h("small", {}, t("common.count", { n: alerts.length }))),
    status,
    frozen.length > 0
      ? notice(
          "error",
          limits.size === 1
            ? t("alerts.frozen", { n: frozenProjects, limit: bytes(frozen[0].upload_limit_bytes) })
            : t("alerts.frozen_limits", { n: frozenProjects }),
          "alerts-frozen",
        )
      : null,
    alerts.length === 0
      ? notice("info", t("alerts.empty"), "alerts-empty")
      : table(
          "alerts-table",
          [t("alerts.col.kind"), t("alerts.col.where"), t("alerts.col.figure"), t("alerts.col.state"), t("alerts.col.since"),
           t("alerts.col.message"), ...(canLift ? [t("alerts.col.action")] : [])],
          alerts.map((a) => [
            h("span", {},
              labelOr(`alerts.kind.${a.kind}`, a.kind),
              h("span", { class: `badge severity-${a.severity}` }, labelOr(`alerts.severity.${a.severity}`, a.severity)),
              a.freeze_egress ? h("span", { class: "badge frozen", "data-testid": `alert-frozen-${a.id}` }, t("alerts.egress_frozen")) : null,
              a.hold_submissions ? h("span", { class: "badge held" }, t("alerts.held")) : null,
              a.stop_work ? h("span", { class: "badge held", "data-testid": `alert-stopped-${a.id}` }, t("alerts.work_stopped")) : null),
            h("span", {}, a.project ? h("strong", {}, a.project) : a.subject, " / ", a.tenant),
            figure(a),
            h("span", {},
              h("span", { class: `badge alert-${a.state}`, "data-testid": `alert-state-${a.id}` }, labelOr(`alerts.state.${a.state}`, a.state)),
              a.lifted_at
                ? h("div", { class: "muted description", title: utcText(a.lifted_at) }, t("alerts.lifted_by", { at: instantText(a.lifted_at), by: a.lifted_by ?? "?" }))
                : null),
            when(a.first_seen),
            h("span", { class: "description" }, alertText(a)),
            ...(canLift ? [a.state === "active" ? lift(a) : "—"] : []),
          ]),
          alerts.map((a) => a.id),
        ),
  );
}

/** What the firewall measured against its threshold: money at its currency's precision (the
 * exact figure on hover), percentages as they are; an artifact's digests (the one found on the
 * node and the one expected) shortened, whole on hover. */
function figure(a: Alert): HTMLElement {
  if (isCurrency(a.unit)) return h("span", {}, cents(a.measured, a.unit), " / ", cents(a.threshold, a.unit));
  if (a.unit === "sha256")
    return h("span", { class: "digest" },
      h("span", { title: a.measured }, `${t("alerts.digest.found")} ${a.measured.slice(0, 12)}…`), " / ",
      h("span", { title: a.threshold }, `${t("alerts.digest.expected")} ${a.threshold.slice(0, 12)}…`));
  return h("span", {}, num(a.measured), ` ${a.unit} / `, num(a.threshold), ` ${a.unit}`);
}

function bytes(n: number): string {
  if (n >= 1e9 && n % 1e9 === 0) return `${n / 1e9} GB`;
  return `${n} B`;
}
