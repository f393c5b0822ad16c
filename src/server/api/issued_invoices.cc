// /api/v1/issued-invoices: invoices frozen at month close (services/issued_invoices.h), read by
// operators and the tenant's users; operators record a payment (POST …/{id}/pay) or void an
// unpaid invoice without credit notes (POST …/{id}/void); GET …/{id}/print is the printable
// invoice (HTML, A4, in the request's language) and GET …/{id}/verify recomputes its content hash.
// /api/v1/credit-notes: corrections of an issued invoice, created by operators, never changed.
// POST /api/v1/invoices/close {month}: an operator closes an ended month now (idempotent).
#include <algorithm>
#include <cstdio>

#include "core/fields.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/issued_invoices.h"

namespace gpurent {
namespace {

Status invoices_operator_only(const Principal& p) {
  if (p.is_operator()) return ok_status();
  return Error::make(Code::kForbidden, Message("api.issued_invoices.operators_only").arg("role", role_name(p.role)));
}

// Credit notes issued against an invoice, oldest first (ids are random: sorted by number).
Result<std::vector<json>> notes_of(StoreReader& store, const std::string& invoice_id) {
  auto recs = list_all(store, "credit-notes", {{"state", invoice_id}});
  if (!recs) return recs.error();
  std::vector<json> out;
  for (const Record& r : *recs) out.push_back(present(r));
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) { return a.value("number", "") < b.value("number", ""); });
  return out;
}

// pay or void: the state moves; lines, totals and hash never do.
void change_state(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                  const Principal& p, bool pay) {
  auto inv = find_visible(app.store, spec, p, req.matches[1]);
  if (!inv) return send_problem(res, inv.error(), req.path);
  if (auto s = invoices_operator_only(p); !s) return send_problem(res, s.error(), req.path);
  auto body = body_or_empty(req);
  if (!body) return send_problem(res, body.error(), req.path);
  FieldErrors errs;
  Fields f(*body, "", errs);
  std::optional<std::string> text =
      pay ? f.opt_str("reference", {.min_len = 1, .max_len = 256}) : std::optional<std::string>(f.str("reason", {.min_len = 1, .max_len = 1024}));
  f.finish();
  if (!errs.empty()) return send_problem(res, errs.to_error(), req.path);
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get_locked("issued-invoices", inv->id);  // a credit note on it waits, and sees it void
    if (!cur) return cur.error();
    if (cur->state != "issued")
      return Error::make(Code::kConflict, Message("api.issued_invoices.not_issued").arg("number", cur->name).arg("state", cur->state));
    const TimeMs now = app.clock.now();
    if (!pay) {
      auto notes = tx.count("credit-notes", {{"state", cur->id}});
      if (!notes) return notes.error();
      if (*notes > 0)
        return Error::make(Code::kConflict, Message("api.issued_invoices.void_credited").arg("number", cur->name));
    }
    Record r = *cur;
    r.state = pay ? "paid" : "void";
    r.body["state"] = r.state;
    if (pay) {
      r.body["paid_at"] = format_rfc3339(now);
      if (text) r.body["payment_reference"] = *text;
    } else {
      r.body["voided_at"] = format_rfc3339(now);
      r.body["void_reason"] = *text;
    }
    if (auto s = store_change(tx, *cur, r, p, pay ? "pay" : "void", r.name, now); !s) return s;
    out = std::move(r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  send_json(res, 200, present(out));
}

template <bool kPay>
void pay_or_void(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  change_state(app, spec, req, res, p, kPay);
}

void print_invoice(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto inv = find_visible(app.store, spec, p, req.matches[1]);
  if (!inv) return send_problem(res, inv.error(), req.path);
  const std::string lang = ResponseLanguage::current();  // ?lang= or Accept-Language (the router's)
  auto notes = notes_of(app.store, inv->id);
  if (!notes) return send_problem(res, notes.error(), req.path);
  res.status = 200;
  res.set_content(invoice_html(inv->body, *notes, lang), "text/html; charset=utf-8");
}

void verify_invoice(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto inv = find_visible(app.store, spec, p, req.matches[1]);
  if (!inv) return send_problem(res, inv.error(), req.path);
  const std::string stored = inv->body.value("hash", "");
  const std::string computed = content_hash(inv->body);
  send_json(res, 200, {{"number", inv->name}, {"hash", stored}, {"computed", computed}, {"verified", stored == computed}});
}

}  // namespace

void register_issued_invoice_routes(App& app, Router& srv) {
  KindSpec inv;
  inv.kind = "issued-invoices";
  inv.id_prefix = "inv";
  inv.object_kind = ObjectKind::kTenant;  // read: operators and the tenant's users; write: operators
  inv.filters = {{"tenant", "tenant_id"}, {"state", "state"}, {"number", "name"}};
  inv.filter_values = {{"state", {"issued", "paid", "void"}}};
  inv.creatable = inv.updatable = inv.deletable = false;  // issued by month close only
  inv.build = [](const json&, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    return Error::make(Code::kInternal, Message("api.issued_invoices.not_built"));
  };
  register_crud(app, srv, inv);
  item_route(app, srv, "POST", "issued-invoices", "pay", pay_or_void<true>);
  item_route(app, srv, "POST", "issued-invoices", "void", pay_or_void<false>);
  item_route(app, srv, "GET", "issued-invoices", "print", print_invoice);
  item_route(app, srv, "GET", "issued-invoices", "verify", verify_invoice);

  KindSpec cn;
  cn.kind = "credit-notes";
  cn.id_prefix = "crn";
  cn.object_kind = ObjectKind::kTenant;
  cn.filters = {{"tenant", "tenant_id"}, {"invoice", "state"}};  // the invoice's id is the state column
  cn.updatable = cn.deletable = false;
  cn.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) -> Result<Built> {
    if (auto s = invoices_operator_only(p); !s) return s.error();
    FieldErrors errs;
    Fields f(body, "", errs);
    if (!f.valid_object()) return errs.to_error();
    const std::string ref = f.str("invoice", {.min_len = 1, .max_len = 80});
    const std::string reason = f.str("reason", {.min_len = 1, .max_len = 1024});
    // The caller's own id for this correction (a ticket, a request id): a second note with it on
    // the same invoice is a 409, so a retry after a lost answer credits once.
    const std::string reference = f.opt_str("reference", {.min_len = 1, .max_len = 120}).value_or("");
    const json* amount = f.raw("amount");
    f.finish();
    if (!errs.empty()) return errs.to_error();
    auto found = resolve_ref(tx, "issued-invoices", ref, {}, "invoice");
    if (!found) return found.error();
    auto rec = tx.get_locked("issued-invoices", found->id);  // a void of it waits, and counts this note
    if (!rec) return rec.error();
    const std::string cur = rec->body.value("currency", "");
    auto pc = parse_currency(cur);
    const Currency c = pc ? *pc : Currency::kUSD;
    if (rec->state == "void")
      return Error::invalid("invoice", Message("api.credit_notes.void").arg("number", rec->name));
    if (!amount || !amount->is_string())
      return Error::invalid("amount", Message("field.money_string"));
    auto m = Money::parse(amount->get<std::string>(), c);
    if (!m) return Error::invalid("amount", m.error().fields.empty() ? Message("field.money_string") : m.error().fields[0].coded);
    if (m->micros() <= 0) return Error::invalid("amount", Message("offer.positive"));
    if (m->micros() % 10'000 != 0) return Error::invalid("amount", Message("api.credit_notes.cents"));
    auto total = Money::parse(rec->body["totals"].value("total", "0"), c);
    int64_t left = total ? total->micros() : 0;
    auto prior = list_all(tx, "credit-notes", {{"state", rec->id}});
    if (!prior) return prior.error();
    for (const Record& n : *prior) {
      if (!reference.empty() && n.body.value("reference", "") == reference)
        return error_with_field(Code::kConflict,
                                Message("api.credit_notes.duplicate")
                                    .arg("reference", reference)
                                    .arg("number", n.name)
                                    .arg("invoice", rec->name),
                                "reference", Message("api.credit_notes.duplicate_reason"));
      if (auto a = Money::parse(n.body.value("amount", "0"), c)) left -= a->micros();
    }
    if (m->micros() > left)
      return Error::invalid("amount", Message("api.credit_notes.above_total")
                                          .arg("left", Money(std::max<int64_t>(left, 0), c).amount_string())
                                          .arg("currency", cur)
                                          .arg("number", rec->name));
    auto series = list_all(tx, "credit-notes", {{"tenant_id", rec->tenant_id}});
    if (!series) return series.error();
    size_t n = 1;
    for (const Record& x : *series) n += x.body.value("currency", "") == cur ? 1 : 0;
    char seq[16];
    std::snprintf(seq, sizeof seq, "%06zu", n);
    json d = {{"number", rec->body.value("tenant", "") + "-" + cur + "-CN-" + seq},
              {"invoice_id", rec->id},
              {"invoice_number", rec->name},
              {"tenant_id", rec->tenant_id},
              {"tenant", rec->body.value("tenant", "")},
              {"currency", cur},
              {"amount", m->amount_string()},
              {"reason", reason},
              {"issued_at", format_rfc3339(app.clock.now())},
              {"issued_by", p.user_id}};
    if (!reference.empty()) d["reference"] = reference;
    d["hash"] = content_hash(d);
    IndexCols idx;
    idx.name = d["number"];
    idx.tenant_id = rec->tenant_id;
    idx.state = rec->id;
    return Built{d, idx};
  };
  register_crud(app, srv, cn);

  route(app, srv, "POST", "/api/v1/invoices/close", "/api/v1/invoices/close",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          if (auto s = invoices_operator_only(p); !s) return send_problem(res, s.error(), req.path);
          auto body = parse_body(req);
          if (!body) return send_problem(res, body.error(), req.path);
          FieldErrors errs;
          Fields f(*body, "", errs);
          if (!f.valid_object()) return send_problem(res, errs.to_error(), req.path);
          const std::string m = f.str("month", {.min_len = 1, .max_len = 16});
          f.finish();
          if (!errs.empty()) return send_problem(res, errs.to_error(), req.path);
          if (m.size() != 7 || m[4] != '-')
            return send_problem(res, Error::invalid("month", Message("api.invoices.month_format").arg("got", m)), req.path);
          auto start = parse_rfc3339(m + "-01", "month");
          if (!start) return send_problem(res, start.error(), req.path);
          auto out = close_month(app, *start, app.clock.now(), p.user_id);
          if (!out) return send_problem(res, out.error(), req.path);
          send_json(res, 200, {{"month", out->month}, {"already_closed", out->already_closed},
                               {"issued", out->issued}, {"failed_tenants", out->failed}});
        });
}

}  // namespace gpurent
