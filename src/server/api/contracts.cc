// /api/v1/contracts: what a tenant signed with a supplier — offers, clauses, reserved commitments,
// exit (model/contract.h). Operators write; the tenant's users read their own (the tenants row of
// the permission matrix). Every offer must be the supplier's and priced in the contract currency;
// a commitment needs the offer's reserved price for its term. A change that would alter what a
// month closed for invoicing bills (a commitment starting there, or one that started there changed
// or removed, an exit whose effective time is there) is a 422: that month's invoices are frozen,
// and the change would reach none of them, or bill twice (docs/resources/contracts.md#closed-months).
//
// /api/v1/allocations: the allocation ledger (server/allocation_ledger.h), read-only; a tenant sees
// its own runs, operators all.
#include "billing/rating_input.h"
#include "model/contract.h"
#include "model/job_run.h"
#include "model/offer.h"
#include "server/api/resources.h"
#include "server/services/allocation_ledger.h"
#include "server/services/issued_invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

// The earliest instant a change alters what is billed, and the field that names it.
struct Reach {
  TimeMs at = INT64_MAX;
  std::string field;
  void see(TimeMs t, std::string f) {
    if (t < at) at = t, field = std::move(f);
  }
};

// The earliest instant two lists of [from, to) pieces (a market commitment's defaults or resales)
// bill differently: a piece changed only in its end differs from the earlier of its two ends on,
// any other from its start.
template <class Piece>
std::optional<TimeMs> pieces_differ(const std::vector<Piece>& a, const std::vector<Piece>& b) {
  std::optional<TimeMs> at;
  // As multisets: a piece twice in one list and once in the other is a difference too.
  const auto scan = [&at](const std::vector<Piece>& x, const std::vector<Piece>& y) {
    for (const Piece& p : x) {
      if (std::count(x.begin(), x.end(), p) <= std::count(y.begin(), y.end(), p)) continue;
      TimeMs t = p.from;
      for (Piece q : y) {
        const TimeMs q_to = q.to;
        q.to = p.to;
        if (q == p) t = std::max(t, std::min(p.to, q_to));
      }
      at = at ? std::min(*at, t) : t;
    }
  };
  scan(a, b);
  scan(b, a);
  return at;
}

// The effective exit of contract `c` (rating's effective_exit), its clauses set (the route fills
// them in before asking).
std::optional<TimeMs> exit_of(const Contract& c) {
  ContractTerms t;
  t.clauses = c.clauses.value_or(ContractTemplate{});
  t.exit_notice_at = c.exit_notice_at;
  t.exit_at = c.exit_at;
  return effective_exit(t);
}

// A resale's undelivered piece, named by its resale trade: diffed as a piece of its own, from its
// own times (a piece added or ended when a resold node goes down or comes back), not from the
// resale's start.
struct UndeliveredPiece {
  std::string trade;
  int64_t gpus = 0;
  TimeMs from = 0, to = 0;
  std::string node;
  bool operator==(const UndeliveredPiece&) const = default;
};
std::vector<UndeliveredPiece> undelivered_of(const std::vector<CommitmentResale>& resales) {
  std::vector<UndeliveredPiece> out;
  for (const auto& x : resales)
    for (const auto& u : x.undelivered) out.push_back({x.trade, u.gpus, u.from, u.to, u.node});
  return out;
}

// The end of commitment m's term (its window for a market commitment).
TimeMs term_end(const ContractCommitment& m) {
  return m.market() ? *m.ends_at : add_months(m.starts_at, m.term_months);
}

// Where changing contract `old` (exit `old_exit`) into `c` (exit `new_exit`) first alters billing.
Reach reach_of_change(const Contract* old, std::optional<TimeMs> old_exit, const Contract& c,
                      std::optional<TimeMs> new_exit) {
  Reach r;
  std::map<std::string, const ContractCommitment*> before;
  if (old)
    for (const auto& m : old->commitments) before[m.name] = &m;
  for (size_t i = 0; i < c.commitments.size(); ++i) {
    const ContractCommitment& m = c.commitments[i];
    const std::string field = "commitments[" + std::to_string(i) + "]";
    const auto it = before.find(m.name);
    if (it == before.end()) {
      r.see(m.starts_at, field + ".starts_at");
      continue;
    }
    const ContractCommitment& o = *it->second;
    before.erase(it);
    ContractCommitment a = o, b = m;
    a.defaults.clear(), a.resales.clear(), b.defaults.clear(), b.resales.clear();
    if (!(a == b)) r.see(std::min(o.starts_at, m.starts_at), field + (m.starts_at < o.starts_at ? ".starts_at" : ""));
    if (auto t = pieces_differ(o.defaults, m.defaults)) r.see(*t, field + ".defaults");
    std::vector<CommitmentResale> ox = o.resales, mx = m.resales;
    for (auto* list : {&ox, &mx})
      for (auto& x : *list) x.undelivered.clear();
    if (auto t = pieces_differ(ox, mx)) r.see(*t, field + ".resales");
    if (auto t = pieces_differ(undelivered_of(o.resales), undelivered_of(m.resales))) r.see(*t, field + ".resales");
  }
  for (const auto& [name, o] : before) r.see(o->starts_at, "commitments");  // removed
  if (old_exit != new_exit) {
    const TimeMs t = std::min(old_exit.value_or(INT64_MAX), new_exit.value_or(INT64_MAX));
    r.see(t, c.exit_at ? "exit.exit_at" : c.exit_notice_at ? "exit.notice_at" : "exit");
  }
  return r;
}

// Refuses a change that would alter what a month closed for invoicing bills (its invoices are
// issued and frozen, or being issued): `existing` is null on create.
Status check_closed_months(StoreTx& tx, const Contract& c, const Record* existing) {
  std::optional<Contract> old;
  std::optional<TimeMs> old_exit;
  if (existing) {
    auto d = decode_record(*existing, decode_contract, "it cannot be changed");
    if (!d) return d.error();
    old = std::move(*d);
    auto e = contract_exit(tx, *old);  // services/allocation_ledger.h, as the ledger reads it
    if (!e) return e.error();
    old_exit = *e;
  }
  const Reach r = reach_of_change(old ? &*old : nullptr, old_exit, c, exit_of(c));
  if (r.at == INT64_MAX) return ok_status();
  auto closed = invoicing_closed_through(tx);
  if (!closed) return closed.error();
  if (r.at >= *closed) return ok_status();
  return Error::invalid(
      r.field,
      Message("api.contracts.closed_month").arg("at", format_rfc3339(r.at)).arg("closed", format_rfc3339(*closed)));
}

// What contract `r` (as stored) bills in months not closed yet: runs and kept storage under it,
// reserved commitments billed there (monthly until their term's end or the exit; a prepaid one's
// charge and exit refund lie there too), and market trades settled into it. Deleting such a
// contract, or moving it to another tenant, supplier or currency, would re-price them at list
// prices (and lose its SLA credits) on those months' invoices; closed months' are frozen.
struct BilledUnder {
  int64_t runs = 0, commitments = 0, trades = 0;
  bool none() const { return runs == 0 && commitments == 0 && trades == 0; }
};
Result<BilledUnder> billed_under(StoreTx& tx, const Record& r) {
  auto closed = invoices_frozen_through(tx);  // a month still closing may rate them yet
  if (!closed) return closed.error();
  BilledUnder out;
  for (const auto& [kind, end_key] : {std::pair{"allocations", "ended_at"}, std::pair{"image_storage", "to"},
                                      std::pair{"artifact_storage", "to"}, std::pair{"volume_storage", "to"}}) {
    auto recs = list_all(tx, kind, {{"tenant_id", r.tenant_id}, {"supplier_id", r.supplier_id}});
    if (!recs) return recs.error();
    for (const Record& x : *recs) {
      if (!x.body.is_object() || x.body.value("contract_id", "") != r.id) continue;
      const json& end = x.body.contains(end_key) ? x.body[end_key] : json();
      auto ended = end.is_string() ? parse_rfc3339(end.get<std::string>(), end_key) : Result<TimeMs>(INT64_MAX);
      if (!ended || *ended >= *closed) ++out.runs;
    }
  }
  auto c = decode_record(r, decode_contract, "it cannot be changed or deleted");
  if (!c) return c.error();
  auto exit = contract_exit(tx, *c);
  if (!exit) return exit.error();
  for (const auto& m : c->commitments)
    if (!m.trade.empty())
      ++out.trades;
    else if (std::min(term_end(m), exit->value_or(INT64_MAX)) > *closed)
      ++out.commitments;
  return out;
}

// On an update: the contract's tenant, supplier and currency stay while it bills anything in a
// month not closed yet (billed_under), since those runs and commitments would move or be re-priced.
Status check_parties_kept(StoreTx& tx, const Contract& c, const Record& existing) {
  auto old = decode_record(existing, decode_contract, "it cannot be changed");
  if (!old) return old.error();
  const char* field = existing.tenant_id != c.tenant_id       ? "tenant"
                      : existing.supplier_id != c.supplier_id ? "supplier"
                      : old->currency != c.currency           ? "currency"
                                                              : nullptr;
  if (!field) return ok_status();
  auto use = billed_under(tx, existing);
  if (!use) return use.error();
  if (use->none()) return ok_status();
  return Error::invalid(field, Message("api.contracts.parties_fixed")
                                   .arg("contract", existing.name)
                                   .arg("runs", std::to_string(use->runs))
                                   .arg("commitments", std::to_string(use->commitments))
                                   .arg("trades", std::to_string(use->trades)));
}

}  // namespace

void register_contract_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "contracts";
  spec.id_prefix = "ctr";
  spec.object_kind = ObjectKind::kTenant;
  spec.filters = {{"tenant", "tenant_id"}, {"supplier", "supplier_id"}, {"name", "name"}};
  spec.build = [&app](const json& body, const Principal&, StoreTx& tx, const Record* existing) -> Result<Built> {
    auto c = parse_contract(body);
    if (!c) return c.error();
    auto tenant = resolve_ref(tx, "tenants", c->tenant, {}, "tenant");
    if (!tenant) return tenant.error();
    auto supplier = resolve_ref(tx, "suppliers", c->supplier, {}, "supplier");
    if (!supplier) return supplier.error();
    c->tenant_id = tenant->id;
    c->supplier_id = supplier->id;
    std::map<std::string, Offer> offers;  // reference -> offer
    for (size_t i = 0; i < c->offers.size(); ++i) {
      const std::string field = "offers[" + std::to_string(i) + "]";
      auto o = resolve_ref(tx, "offers", c->offers[i], {{"supplier_id", supplier->id}}, field);
      if (!o) return o.error();
      auto offer = decode_record(*o, [&](const json& b) { return parse_offer(b, app.catalog); }, "no contract can name it");
      if (!offer) return offer.error();
      if (offer->currency != c->currency)
        return Error::invalid(field, Message("api.contracts.offer_currency")
                                         .arg("offer", o->name)
                                         .arg("offer_currency", currency_code(offer->currency))
                                         .arg("currency", currency_code(c->currency)));
      c->offer_ids.push_back(o->id);
      offers[c->offers[i]] = std::move(*offer);
    }
    for (size_t i = 0; i < c->commitments.size(); ++i) {
      const auto& m = c->commitments[i];
      if (m.market()) continue;  // priced by its trade
      const std::string key = "reserved_" + std::to_string(m.term_months) + "m";
      if (!offers.at(m.offer).prices.reserved_for(m.term_months))
        return Error::invalid("commitments[" + std::to_string(i) + "].term_months",
                              Message("api.contracts.no_reserved_price").arg("offer", m.offer).arg("price", key));
    }
    // The clauses are part of what was signed: absent on a create, the first offer's template as
    // it is now is copied in; absent on an update, the contract keeps its own. A supplier's later
    // template change (a lower floor, a longer notice) never reaches a signed contract.
    if (!c->clauses && existing) {
      auto old = decode_record(*existing, decode_contract, "it cannot be changed");
      if (!old) return old.error();
      c->clauses = std::move(old->clauses);
    }
    if (!c->clauses) c->clauses = offers.at(c->offers[0]).contract_template;
    if (existing)
      if (auto s = check_parties_kept(tx, *c, *existing); !s) return s.error();
    if (auto s = check_closed_months(tx, *c, existing); !s) return s.error();
    return Built{to_json(*c), index_of(*c)};
  };
  // Runs (and kept storage) billed under a contract in a month not closed yet, or market trades
  // settled into it, would be re-priced at list prices (and lose its SLA credits) on those
  // months' invoices: such a contract stays; an exit ends it. Closed months' invoices are frozen.
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    if (auto locked = tx.get_locked("contracts", r.id); !locked) return locked.error();
    auto use = billed_under(tx, r);
    if (!use) return use.error();
    if (use->none()) return ok_status();
    return Error::make(Code::kConflict, Message("api.contracts.in_use")
                                            .arg("contract", r.name)
                                            .arg("runs", std::to_string(use->runs))
                                            .arg("commitments", std::to_string(use->commitments))
                                            .arg("trades", std::to_string(use->trades)));
  };
  register_crud(app, srv, spec);

  KindSpec alloc;
  alloc.kind = "allocations";
  alloc.id_prefix = "alc";
  alloc.object_kind = ObjectKind::kJob;
  alloc.creatable = false;
  alloc.updatable = false;
  alloc.deletable = false;
  alloc.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"supplier", "supplier_id"}, {"state", "state"}};
  alloc.filter_values["state"] = enum_names(kRunStateNames);
  alloc.updated_since = true;
  alloc.build = [](const json&, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    return Error::make(Code::kMethodNotAllowed, Message("api.allocations.not_created"));
  };
  register_crud(app, srv, alloc);
}

}  // namespace gpurent
