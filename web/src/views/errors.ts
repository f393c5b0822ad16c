// How a view shows a failed request: 403 says the account may not read it; others give the
// status and the server's one-line detail.

import { ApiError } from "../api";
import { notice } from "../dom";
import { t } from "../i18n";

export function errorNotice(e: unknown): HTMLElement {
  if (e instanceof ApiError) {
    if (e.status === 0) return notice("error", t("login.unreachable"), "view-error"); // no answer at all
    if (e.status === 403) return notice("error", t("common.forbidden_view", { detail: e.detail }), "view-error");
    return notice("error", t("common.error", { status: e.status, detail: e.detail }), "view-error");
  }
  return notice("error", String(e), "view-error");
}
