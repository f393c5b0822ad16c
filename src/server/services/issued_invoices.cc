#include "server/services/issued_invoices.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <future>
#include <set>

#include "billing/rating_input.h"
#include "core/ids.h"
#include "core/message.h"
#include "model/tenant.h"
#include "server/services/control_loop.h"
#include "server/services/invoices.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

std::string month_label(TimeMs month) { return format_rfc3339(month).substr(0, 7); }

std::string seq_text(size_t n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06zu", n);
  return buf;
}

// One invoice document per currency with lines in the tenant's month (sections of that currency).
std::vector<json> documents(const Invoice& inv, const std::string& label, TimeMs now, const std::string& by) {
  json whole = to_json(inv);
  std::map<std::string, json> by_currency;
  for (json& s : whole["sections"]) {
    if (!s.contains("lines") || s["lines"].empty()) continue;
    const std::string cur = s.value("currency", "");
    json& d = by_currency[cur];
    if (d.is_null())
      d = {{"tenant_id", inv.tenant_id},
           {"tenant", inv.tenant_name},
           {"currency", cur},
           {"month", label},
           {"period", whole["period"]},
           {"issued_at", format_rfc3339(now)},
           {"issued_by", by},
           {"sections", json::array()},
           {"totals", whole["totals"].value(cur, json::object())},
           {"unpriced_allocations", whole["unpriced_allocations"]}};
    d["sections"].push_back(std::move(s));
  }
  std::vector<json> out;
  for (auto& [cur, d] : by_currency) out.push_back(std::move(d));
  return out;
}

}  // namespace

std::string content_hash(const json& doc) {
  json c = doc;
  for (const char* k : {"state", "paid_at", "payment_reference", "voided_at", "void_reason", "hash", "id",
                        "created_at", "updated_at", "version"})
    c.erase(k);
  return "sha256:" + sha256_hex(c.dump());
}

Result<MonthCloseOutcome> close_month(ServiceContext& ctx, TimeMs month, TimeMs now, const std::string& by) {
  MonthCloseOutcome out;
  out.month = month_label(month);
  if (month != month_start(month) || add_months(month, 1) > now)
    return Error::invalid("month", Message("api.invoices.close_not_ended").arg("month", out.month));
  auto marks = list_all(ctx.store, "month-closes", {{"name", out.month}});
  if (!marks) return marks.error();
  if (!marks->empty() && marks->front().state != kMonthClosing) {
    out.already_closed = true;
    return out;
  }
  // The month is marked as closing before any tenant is rated: usage dated in it is refused from
  // this commit on (ingest_usage checks inside its transaction), so none lands in a month after
  // its tenant was rated. A close that fails, or a crash, leaves the mark: the next close goes on.
  if (marks->empty()) {
    Status st = ctx.loop.run([&](StoreTx& tx) -> Status {
      auto again = list_all(tx, "month-closes", {{"name", out.month}});
      if (!again) return again.error();
      if (!again->empty()) return ok_status();
      Record r;
      r.kind = "month-closes";
      r.id = new_id("mcl");
      r.name = out.month;
      r.state = kMonthClosing;
      r.created_at = r.updated_at = now;
      r.version = 1;
      r.body = {{"month", out.month}, {"closing_since", format_rfc3339(now)}, {"closed_by", by}};
      return tx.insert(r);
    });
    if (!st) return st.error();
  }
  auto tenants = list_all(ctx.store, "tenants", {});
  if (!tenants) return tenants.error();
  // Issued in transactions of up to 64 tenants (one fsync each), each tenant's invoices checked
  // against what exists inside the transaction that writes them. While the control loop writes
  // one batch, this thread reads and rates the next (one batch in flight: numbers stay in order).
  using Batch = std::vector<std::pair<const Record*, std::vector<json>>>;
  Batch pending;
  auto issue = [&](Batch batch) -> Status {
    return ctx.loop.run([&](StoreTx& tx) -> Status {
      for (auto& [t, docs] : batch)
        for (json& d : docs) {
          const std::string cur = d["currency"];
          auto n = tx.count("issued-invoices", {{"tenant_id", t->id}, {"gpu_model", cur}});
          if (!n) return n.error();
          auto same = tx.count("issued-invoices", {{"tenant_id", t->id}, {"gpu_model", cur}, {"region", out.month}});
          if (!same) return same.error();
          if (*same > 0) continue;  // issued by an earlier close
          // The tenant's name now, its row locked: a rename waits for this write and then finds
          // the invoice (tenants.cc keeps the name of a tenant with issued invoices).
          auto named = tx.get_locked("tenants", t->id);
          if (!named && named.error().code == Code::kNotFound) continue;  // deleted since: nothing to issue
          if (!named) return named.error();
          d["tenant"] = named->name;
          d["number"] = named->name + "-" + cur + "-" + seq_text(static_cast<size_t>(*n) + 1);
          d["hash"] = "sha256:" + sha256_hex(d.dump());  // = content_hash(d) once the state keys are set
          d["state"] = "issued";
          Record r;
          r.kind = "issued-invoices";
          r.id = new_id("inv");
          r.name = d["number"];
          r.tenant_id = t->id;
          r.state = "issued";
          r.gpu_model = cur;        // index columns: the currency and the month (a close's idempotency key)
          r.region = out.month;
          r.created_at = r.updated_at = now;
          r.version = 1;
          r.body = std::move(d);
          if (auto s = tx.insert(r); !s) return s;
          if (auto s = tx.append_audit({now, by, "issue", "issued-invoices", r.id, r.name}); !s) return s;
          out.issued.push_back(r.id);
        }
      return ok_status();
    });
  };
  std::future<Status> writing;
  auto hand_over = [&]() -> Status {
    if (writing.valid())
      if (auto st = writing.get(); !st) return st;
    writing = std::async(std::launch::async, [&issue, b = std::move(pending)]() mutable { return issue(std::move(b)); });
    pending.clear();
    return ok_status();
  };
  for (const Record& t : *tenants) {
    auto inv = build_invoice(ctx.store, ctx.catalog, t.id, month, add_months(month, 1), now);
    if (!inv) {
      spdlog::error("{}", json({{"event", "month_close_tenant_failed"}, {"tenant", t.name}, {"month", out.month},
                                {"error", inv.error().message}}).dump());
      out.failed.push_back(t.name);
      continue;
    }
    std::vector<json> docs = documents(*inv, out.month, now, by);
    if (docs.empty()) continue;
    // How the tenant pays when the invoice is issued: a prepaid invoice is drawn from its top-ups,
    // a postpaid one is owed until paid. The balance reads each invoice by its own, so a later
    // change of the tenant's payment does not re-read the invoices issued before it.
    auto tenant = parse_tenant(t.body);
    const char* payment = tenant && tenant->billing.payment == Payment::kPrepaid ? "prepaid" : "postpaid";
    for (json& d : docs) d["payment"] = payment;
    pending.emplace_back(&t, std::move(docs));
    if (pending.size() >= 64)
      if (auto st = hand_over(); !st) return st.error();
  }
  if (!pending.empty())
    if (auto st = hand_over(); !st) return st.error();
  if (writing.valid())
    if (auto st = writing.get(); !st) return st.error();
  if (out.failed.empty()) {
    Status st = ctx.loop.run([&](StoreTx& tx) -> Status {
      auto again = list_all(tx, "month-closes", {{"name", out.month}});
      if (!again) return again.error();
      if (!again->empty() && again->front().state != kMonthClosing) return ok_status();
      Record r;
      if (!again->empty()) {
        r = again->front();
      } else {
        r.kind = "month-closes";
        r.id = new_id("mcl");
        r.name = out.month;
        r.created_at = now;
      }
      // Every invoice of the month, those of a close that stopped half-way included.
      auto issued = tx.count("issued-invoices", {{"region", out.month}});
      if (!issued) return issued.error();
      const json since = r.body.is_object() ? r.body.value("closing_since", json()) : json();
      r.state.clear();
      r.updated_at = now;
      r.body = {
          {"month", out.month}, {"closed_at", format_rfc3339(now)}, {"closed_by", by}, {"invoices_issued", *issued}};
      if (since.is_string()) r.body["closing_since"] = since;
      if (again->empty()) {
        r.version = 1;
        return tx.insert(r);
      }
      return tx.update(r);
    });
    if (!st) return st.error();
  }
  spdlog::info("{}", json({{"event", "month_closed"}, {"month", out.month}, {"issued", out.issued.size()},
                           {"failed_tenants", out.failed}}).dump());
  return out;
}

namespace {
template <class Reader>
Result<TimeMs> closed_through_in(Reader& reader, bool issued_only = false) {
  TimeMs through = INT64_MIN;
  auto closes = list_all(reader, "month-closes", {});
  if (!closes) return closes.error();
  for (const Record& r : *closes) {
    if (issued_only && r.state == kMonthClosing) continue;
    if (auto m = parse_rfc3339(r.name + "-01T00:00:00Z", "month")) through = std::max(through, add_months(*m, 1));
  }
  return through;
}

template <class Reader>
Result<TimeMs> billable_from_in(Reader& reader, TimeMs now, bool auto_close, int64_t delay_ms) {
  auto marked = closed_through_in(reader);
  if (!marked) return marked.error();
  return auto_close ? std::max(*marked, month_start(now - delay_ms)) : *marked;
}
}  // namespace

Result<TimeMs> invoicing_closed_through(StoreReader& store) { return closed_through_in(store); }
Result<TimeMs> invoicing_closed_through(StoreTx& tx) { return closed_through_in(tx); }
Result<TimeMs> invoices_frozen_through(StoreTx& tx) { return closed_through_in(tx, /*issued_only=*/true); }
Result<TimeMs> billable_from(StoreReader& store, TimeMs now, bool auto_close, int64_t delay_ms) {
  return billable_from_in(store, now, auto_close, delay_ms);
}
Result<TimeMs> billable_from(StoreTx& tx, TimeMs now, bool auto_close, int64_t delay_ms) {
  return billable_from_in(tx, now, auto_close, delay_ms);
}

Result<std::vector<TimeMs>> unclosed_months(StoreReader& store, TimeMs now, int64_t delay_ms) {
  const TimeMs this_month = month_start(now);
  TimeMs last = add_months(this_month, -1);  // the newest month that has ended
  if (now < this_month + delay_ms) last = add_months(last, -1);
  // From the month the first tenant was made in (nothing can be billed before), at most
  // kMaxUnclosedMonths back.
  auto tenants = list_all(store, "tenants", {});
  if (!tenants) return tenants.error();
  TimeMs first = last;
  for (const Record& t : *tenants) first = std::min(first, month_start(t.created_at));
  first = std::max(first, add_months(this_month, -kMaxUnclosedMonths));
  auto marks = list_all(store, "month-closes", {});
  if (!marks) return marks.error();
  std::set<std::string> closed;
  for (const Record& r : *marks)
    if (r.state != kMonthClosing) closed.insert(r.name);
  std::vector<TimeMs> out;
  for (TimeMs m = first; m <= last; m = add_months(m, 1))
    if (!closed.count(month_label(m))) out.push_back(m);
  return out;
}

Result<std::optional<MonthCloseOutcome>> close_due_month(ServiceContext& ctx, TimeMs now, int64_t delay_ms) {
  auto due = unclosed_months(ctx.store, now, delay_ms);
  if (!due) return due.error();
  // Oldest first; a month that cannot close (a tenant's month fails to rate) holds back no later
  // one. The answer is the first close with a failure, else the last close.
  std::optional<MonthCloseOutcome> out;
  for (TimeMs month : *due) {
    auto r = close_month(ctx, month, now, "");
    if (!r) return r.error();
    if (!out || out->failed.empty()) out = std::move(*r);
  }
  return out;
}

}  // namespace gpurent
