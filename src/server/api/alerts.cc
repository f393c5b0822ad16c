// /api/v1/alerts: the cost firewall's alerts (server/cost_firewall.h), read-only but for
// POST /api/v1/alerts/{ref}/lift, by which an operator or the tenant's admin lifts an egress freeze
// (or acknowledges any other alert): the alert becomes "lifted" and its key never freezes again.
//
// /api/v1/webhooks: where alerts are delivered (generic JSON, DingTalk, Feishu/Lark, WeCom robots;
// billing/webhook_format.h). Operators only; a secret is write-only (responses say "secret_set").
#include "billing/firewall.h"
#include "billing/webhook_format.h"
#include "core/ids.h"
#include "model/alert.h"
#include "model/webhook.h"
#include "server/http/http_util.h"
#include "server/api/resources.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

// A create body: the model's checks, then the tenant it names resolved to an id.
Result<Webhook> build_webhook(const json& body, StoreTx& tx) {
  auto w = parse_webhook(body);
  if (!w) return w.error();
  if (w->tenant) {
    auto t = resolve_ref(tx, "tenants", *w->tenant, {}, "tenant");
    if (!t) return t.error();
    w->tenant_id = t->id;
  }
  return w;
}

json present_webhook(const Record& r) {
  json j = present(r);
  j["secret_set"] = j.contains("secret");
  j.erase("secret");
  return j;
}

// POST /api/v1/alerts/{ref}/lift: the alert becomes "lifted" (who, when) through its codec.
void lift_alert(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto a = find_visible(app.store, app.kinds.at("alerts"), p, req.matches[1]);
  if (!a) return send_problem(res, a.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kAlert), p, *a))
    return send_problem(res, Error::make(Code::kForbidden, Message("api.alerts.lift_forbidden")), req.path);
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("alerts", a->id);
    if (!cur) return cur.error();
    if (cur->state == "lifted")
      return Error::make(Code::kConflict, Message("api.alerts.already_lifted").arg("alert", cur->id));
    auto stored = decode_record(*cur, decode_stored_alert, "it cannot be lifted");
    if (!stored) return stored.error();
    const TimeMs now = app.clock.now();
    stored->state = AlertState::kLifted;
    stored->lifted_at = now;
    stored->lifted_by = p.user_id;
    Record u = *cur;
    u.state = "lifted";
    u.body = to_json(*stored);
    u.updated_at = now;
    if (auto s = tx.update(u); !s) return s;
    if (auto s = tx.append_audit({now, p.user_id, "lift", "alerts", u.id, u.name}); !s) return s;
    u.version = cur->version + 1;
    out = u;
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  send_json(res, 200, present(out));
}

// Webhooks are operators' only: the routes below refuse anyone else with `not_operator`.
bool operator_only(const Principal& p) { return write_scope(p, ObjectKind::kWebhook) == Scope::kAll; }

// A webhook by id or by name.
Result<Record> find_hook(App& app, const std::string& ref) {
  if (looks_like_id(ref)) return app.store.get("webhooks", ref);
  auto page = app.store.list({"webhooks", {{"name", ref}}, "", 1});
  if (!page) return page.error();
  if (page->items.empty()) return Error::make(Code::kNotFound, Message("api.webhooks.not_found").arg("webhook", ref));
  return page->items.front();
}

// GET /api/v1/webhooks.
void list_webhooks(App& app, const Error& not_operator, const httplib::Request& req, httplib::Response& res,
                   const Principal& p) {
  if (!operator_only(p)) return send_problem(res, not_operator, req.path);
  auto page = app.store.list({"webhooks", {}, "", 1000});
  if (!page) return send_problem(res, page.error(), req.path);
  json items = json::array();
  for (const auto& r : page->items) items.push_back(present_webhook(r));
  send_json(res, 200, {{"items", items}, {"next_after", nullptr}});
}

// POST /api/v1/webhooks: created and audited.
void create_webhook(App& app, const Error& not_operator, const httplib::Request& req, httplib::Response& res,
                    const Principal& p) {
  if (!operator_only(p)) return send_problem(res, not_operator, req.path);
  auto parsed = parse_body(req);
  if (!parsed) return send_problem(res, parsed.error(), req.path);
  const json& body = *parsed;
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto w = build_webhook(body, tx);
    if (!w) return w.error();
    Record r;
    r.kind = "webhooks";
    r.id = new_id("whk");
    r.name = w->name;
    r.created_at = r.updated_at = app.clock.now();
    r.body = to_json(*w);
    if (auto s = tx.insert(r); !s) return s;
    if (auto s = tx.append_audit({r.created_at, p.user_id, "create", "webhooks", r.id, r.name}); !s) return s;
    r.version = 1;
    out = r;
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  res.set_header("Location", "/api/v1/webhooks/" + out.id);
  send_json(res, 201, present_webhook(out));
}

// GET /api/v1/webhooks/{ref}.
void get_webhook(App& app, const Error& not_operator, const httplib::Request& req, httplib::Response& res,
                 const Principal& p) {
  if (!operator_only(p)) return send_problem(res, not_operator, req.path);
  auto r = find_hook(app, req.matches[1]);
  if (!r) return send_problem(res, r.error(), req.path);
  send_json(res, 200, present_webhook(*r));
}

// DELETE /api/v1/webhooks/{ref}: removed and audited.
void delete_webhook(App& app, const Error& not_operator, const httplib::Request& req, httplib::Response& res,
                    const Principal& p) {
  if (!operator_only(p)) return send_problem(res, not_operator, req.path);
  auto r = find_hook(app, req.matches[1]);
  if (!r) return send_problem(res, r.error(), req.path);
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    if (auto s = tx.remove("webhooks", r->id); !s) return s;
    return tx.append_audit({app.clock.now(), p.user_id, "delete", "webhooks", r->id, r->name});
  });
  if (!st) return send_problem(res, st.error(), req.path);
  res.status = 204;
}

}  // namespace

void register_alert_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "alerts";
  spec.id_prefix = "alr";
  spec.object_kind = ObjectKind::kAlert;
  spec.creatable = false;
  spec.updatable = false;
  spec.deletable = false;
  spec.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"state", "state"}};
  spec.filter_values["state"] = enum_names(kAlertStateNames);
  spec.build = [](const json&, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    return Error::make(Code::kMethodNotAllowed, Message("api.alerts.not_created"));
  };
  register_crud(app, srv, spec);

  route(app, srv, "POST", R"(/api/v1/alerts/([^/]+)/lift)", "alerts_lift",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) { lift_alert(app, req, res, p); });

  const Error not_operator = Error::make(Code::kForbidden, Message("api.webhooks.operator_only"));
  route(app, srv, "GET", "/api/v1/webhooks", "webhooks",
        [&app, not_operator](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          list_webhooks(app, not_operator, req, res, p);
        });
  route(app, srv, "POST", "/api/v1/webhooks", "webhooks",
        [&app, not_operator](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          create_webhook(app, not_operator, req, res, p);
        });
  route(app, srv, "GET", R"(/api/v1/webhooks/([^/]+))", "webhook",
        [&app, not_operator](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          get_webhook(app, not_operator, req, res, p);
        });
  route(app, srv, "DELETE", R"(/api/v1/webhooks/([^/]+))", "webhook",
        [&app, not_operator](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          delete_webhook(app, not_operator, req, res, p);
        });
}

}  // namespace gpurent
