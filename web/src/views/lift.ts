// The Lift button of a cost-firewall alert (POST /api/v1/alerts/{id}/lift, no body fields),
// shown to operators and to the tenant's admins (context.ts mayLiftAlerts); the server checks
// the same rule. After a lift, `done` re-reads the view (ctx.reload); a refusal goes to `failed`.

import { post } from "../api";
import { h } from "../dom";
import { t } from "../i18n";
import type { Alert } from "../types";

export function liftButton(alertId: string, done: () => void, failed: (e: unknown) => void): HTMLButtonElement {
  const button = h("button", { type: "button", "data-testid": `alert-lift-${alertId}` }, t("alerts.lift"));
  button.addEventListener("click", async () => {
    button.disabled = true;
    button.textContent = t("alerts.lifting");
    try {
      await post<Alert>(`alerts/${encodeURIComponent(alertId)}/lift`, {});
    } catch (e) {
      failed(e);
      button.disabled = false;
      button.textContent = t("alerts.lift");
      return;
    }
    done();
  });
  return button;
}
