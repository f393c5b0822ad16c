// Balances (docs/billing.md#balances):
//   /api/v1/top-ups — money a prepaid tenant paid in: operators record it (POST), everyone reads
//     their own tenant's (GET); never changed or deleted.
//   POST /api/v1/payments/webhook — the payment provider records a top-up, signed with the secret
//     of `gpurent serve --payment-webhook-secret-file` (no bearer token: the signature is the
//     credential); a payment delivered twice is recorded once.
//   GET /api/v1/tenants/{ref}/balance — the balances live (services/balances.h).
//   PUT /api/v1/tenants/{ref}/billing — how the tenant pays and when its work stops: operators set
//     everything; a tenant's admin only its own runway alert.
#include <chrono>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "billing/webhook_format.h"
#include "core/fields.h"
#include "server/services/record_faults.h"
#include "model/tenant.h"
#include "model/top_up.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/balances.h"

namespace gpurent {
namespace {

// The principal a signed payment webhook acts as (its top-ups say by: "payment-webhook").
constexpr const char* kWebhookUser = "payment-webhook";
constexpr int64_t kWebhookSkewMs = 5 * kMsPerMinute;

void get_balance(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto t = find_visible(app.store, spec, p, req.matches[1]);
  if (!t) return send_problem(res, t.error(), req.path);
  auto b = tenant_balances(app.store, app.catalog, *t, app.clock.now());
  if (!b) return send_problem(res, b.error(), req.path);
  send_json(res, 200, to_json(*b));
}

void put_billing(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  const bool op = p.is_operator();
  auto out = change_tenant_setting(
      app, spec, req, res, p, "api.tenants.billing_forbidden", "billing",
      [&](StoreTx&, Tenant& t, const json& body) -> Result<std::string> {
        FieldErrors errs;
        Fields f(body, "", errs);
        if (!f.valid_object()) return errs.to_error();
        BillingSettings next;
        parse_billing_settings(f, next, t.currency);
        f.finish();
        if (!errs.empty()) return errs.to_error();
        if (!op) {  // a tenant's admin: its runway alert only
          BillingSettings allowed = t.billing;
          allowed.runway_alert_minutes = next.runway_alert_minutes;
          if (!(allowed == next)) {
            const char* field = next.payment != t.billing.payment             ? "payment"
                                : next.credit_limit != t.billing.credit_limit ? "credit_limit"
                                                                              : "stop_minutes";
            return error_with_field(Code::kForbidden, Message("api.tenants.billing_operator_only"), field,
                                    Message("api.tenants.billing_operator_field"));
          }
        }
        t.billing = next;
        return std::string(enum_name(kPaymentNames, next.payment));
      });
  if (out) send_json(res, 200, to_json(decode_record(*out, parse_tenant, "").value().billing));
}

// The signature check of an inbound payment: X-Gpurent-Timestamp (ms) within 5 minutes of now and
// X-Gpurent-Signature = "sha256=" + hex HMAC-SHA256(secret, timestamp + "." + body), the scheme
// gpurent's own generic webhooks use.
Status verify_signature(const App& app, const httplib::Request& req) {
  const std::string ts = req.get_header_value("X-Gpurent-Timestamp");
  const std::string sig = req.get_header_value("X-Gpurent-Signature");
  if (ts.empty() || sig.empty()) return Error::make(Code::kUnauthorized, Message("api.payments.unsigned"));
  char* end = nullptr;
  const long long t = std::strtoll(ts.c_str(), &end, 10);  // clamped to LLONG_MIN/MAX: compared, never subtracted
  const TimeMs now = app.clock.now();
  if (end == ts.c_str() || *end != '\0' || t < now - kWebhookSkewMs || t > now + kWebhookSkewMs)
    return Error::make(Code::kUnauthorized, Message("api.payments.stale"));
  const std::string want = generic_signature(app.opts.payment_webhook_secret, t, req.body);
  // Constant-time comparison: the signature is a credential.
  unsigned char diff = want.size() == sig.size() ? 0 : 1;
  for (size_t i = 0; i < want.size() && i < sig.size(); ++i) diff |= static_cast<unsigned char>(want[i] ^ sig[i]);
  if (diff != 0) return Error::make(Code::kUnauthorized, Message("api.payments.bad_signature"));
  return ok_status();
}

void payment_webhook(App& app, const httplib::Request& req, httplib::Response& res) {
  if (!req.has_header("X-Gpurent-Signature") || !req.has_header("X-Gpurent-Timestamp"))
    return send_problem(res, Error::make(Code::kUnauthorized, Message("api.payments.unsigned")), req.path);
  if (app.opts.payment_webhook_secret.empty())
    return send_problem(res, Error::make(Code::kNotFound, Message("api.payments.not_configured")), req.path);
  if (auto s = verify_signature(app, req); !s) return send_problem(res, s.error(), req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  const KindSpec& spec = app.kinds.at("top-ups");
  const Principal hook{kWebhookUser, "", Role::kOperatorAdmin, "", ""};
  auto created = create_object(app, spec, *body, hook);
  if (created) return send_json(res, 201, present(*created));
  // The same payment delivered again (same tenant, reference, currency and amount): answered with
  // the top-up it recorded.
  if (created.error().code == Code::kConflict) {
    const json& b = *body;
    auto t = b.contains("tenant") && b["tenant"].is_string()
                 ? find_visible(app.store, app.kinds.at("tenants"), hook, b["tenant"].get<std::string>())
                 : Result<Record>(created.error());
    auto same = t && b.contains("reference") && b["reference"].is_string()
                    ? app.store.list({"top-ups", {{"tenant_id", t->id}, {"name", b["reference"].get<std::string>()}}, "", 1})
                    : Result<Page>(created.error());
    if (same && !same->items.empty()) {
      const Record& r = same->items.front();
      auto had = decode_top_up(r.body);
      auto tenant = decode_record(*t, parse_tenant, "");
      auto again = tenant ? parse_top_up(b, tenant->currency) : Result<TopUp>(tenant.error());
      if (had && again && had->amount == again->amount) return send_json(res, 200, present(r));
    }
  }
  send_problem(res, created.error(), req.path);
}

}  // namespace

void register_balance_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "top-ups";
  spec.id_prefix = "tup";
  spec.object_kind = ObjectKind::kTenant;  // operators write; tenants read their own
  spec.filters = {{"tenant", "tenant_id"}, {"currency", "gpu_model"}, {"source", "state"}};
  spec.updatable = false;
  spec.deletable = false;
  spec.build = [](const json& body, const Principal& p, StoreTx& tx, const Record*) -> Result<Built> {
    // The amount is read in the tenant's currency unless the body names one: find the tenant first.
    const json* ref = body.is_object() && body.contains("tenant") ? &body["tenant"] : nullptr;
    if (!ref || !ref->is_string()) return parse_top_up(body, Currency::kUSD).error();
    auto t = resolve_ref(tx, "tenants", ref->get<std::string>(), {}, "tenant");
    if (!t) return t.error();
    auto tenant = decode_record(*t, parse_tenant, "no top-up can be recorded for it");
    if (!tenant) return tenant.error();
    auto tu = parse_top_up(body, tenant->currency);
    if (!tu) return tu.error();
    if (tenant->billing.payment != Payment::kPrepaid)
      return Error::invalid("tenant", Message("api.top_ups.not_prepaid").arg("tenant", t->name));
    const bool hook = p.user_id == kWebhookUser;
    if (hook && tu->amount.micros() < 0) return Error::invalid("amount", Message("api.top_ups.webhook_negative"));
    auto same = tx.count("top-ups", {{"tenant_id", t->id}, {"name", tu->reference}});
    if (!same) return same.error();
    if (*same > 0)
      return error_with_field(Code::kConflict, Message("api.top_ups.duplicate").arg("reference", tu->reference), "reference",
                              Message("api.top_ups.duplicate_reason"));
    tu->tenant_id = t->id;
    tu->source = hook ? TopUpSource::kPaymentWebhook : TopUpSource::kOperator;
    tu->by = p.user_id;
    IndexCols idx;
    idx.name = tu->reference;
    idx.tenant_id = t->id;
    idx.gpu_model = currency_code(tu->amount.currency());
    idx.state = enum_name(kTopUpSourceNames, tu->source);
    return Built{to_json(*tu), idx};
  };
  register_crud(app, srv, spec);
  item_route(app, srv, "GET", "tenants", "balance", get_balance);
  item_route(app, srv, "PUT", "tenants", "billing", put_billing);

  // Open route: the signature is the credential. Counted in /metrics like the API's routes.
  srv.Post("/api/v1/payments/webhook", [&app](const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      payment_webhook(app, req, res);
    } catch (const std::exception& e) {
      spdlog::error("{}", json({{"event", "handler_exception"}, {"route", "/api/v1/payments/webhook"}, {"what", e.what()}})
                              .dump(-1, ' ', false, json::error_handler_t::replace));
      res = httplib::Response();
      send_problem(res, Error::make(Code::kInternal, "internal error"), req.path);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    app.metrics.observe_request("POST", "/api/v1/payments/webhook", res.status == -1 ? 200 : res.status, secs);
  });
}

}  // namespace gpurent
