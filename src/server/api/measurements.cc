// /api/v1/measurements: card FP16 benchmarks, node NCCL bandwidth and node outages
// (model/measurement.h) that contract clauses turn into credits on the invoice. Operators and the
// node's supplier record them; a tenant's admin files disputes about a node its jobs ran on, which
// count once an operator or the node's supplier accepts them (POST …/{id}/accept, …/{id}/reject);
// everyone reads. Records are facts and append-only (no PUT, no DELETE): a wrong one is corrected
// by a new record naming it in `corrects` (same kind, node and card; once), which readers use in
// its place — a supplier's correction of what it did not type in itself waits for an operator. The
// server records who wrote each (`recorded_by`).
#include "model/measurement.h"
#include "model/node.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {

// Disputes one tenant may have waiting for the supplier or an operator at once.
constexpr int64_t kMaxPendingDisputes = 100;

// The disputes among `filed` still waiting; only those no tenant filed (suppliers') with
// `suppliers_only`.
static int64_t pending_disputes(const std::vector<Record>& filed, bool suppliers_only) {
  int64_t pending = 0;
  for (const Record& r : filed)
    if ((!suppliers_only || r.tenant_id.empty()) && r.body.is_object() && r.body.value("status", "") == "disputed")
      ++pending;
  return pending;
}

Status check_dispute_room(StoreTx& tx, const std::string& tenant_id, int64_t adding, const std::string& field) {
  auto filed = list_all(tx, "measurements", {{"tenant_id", tenant_id}});
  if (!filed) return filed.error();
  if (pending_disputes(*filed, false) + adding > kMaxPendingDisputes)
    return Error::invalid(
        field, Message("api.measurements.too_many_disputes").arg("max", std::to_string(kMaxPendingDisputes)));
  return ok_status();
}

Result<bool> tenant_used_node(StoreTx& tx, const std::string& tenant_id, const std::string& node_id) {
  // One record (allocation_ledger.h), not the tenant's runs: this is in the single writer, and a
  // refused request (a node it never used) writes nothing, so it can be repeated at will.
  return tenant_ran_on(tx, tenant_id, node_id);
}

namespace {

// Whether `prior` is what a user of supplier `supplier_id` typed in itself: recorded by such a
// user, not a tenant's dispute and not an acceptance run's result. Only that a supplier corrects at
// once; a measurement from anyone or anything else that penalises it, it can only contest.
Result<bool> typed_in_by_supplier(StoreTx& tx, const Measurement& prior, const std::string& supplier_id) {
  if (prior.status != MeasurementStatus::kRecorded || !prior.tenant_id.empty() || !prior.acceptance_run.empty() ||
      prior.recorded_by.empty())
    return false;
  auto user = tx.get("users", prior.recorded_by);
  if (!user) return user.error().code == Code::kNotFound ? Result<bool>(false) : Result<bool>(user.error());
  return user->supplier_id == supplier_id;
}

// Suppliers' corrections waiting for an operator at once, per supplier (as a tenant's disputes).
Status check_supplier_dispute_room(StoreTx& tx, const std::string& supplier_id) {
  auto filed = list_all(tx, "measurements", {{"supplier_id", supplier_id}});
  if (!filed) return filed.error();
  if (pending_disputes(*filed, true) + 1 > kMaxPendingDisputes)
    return Error::invalid(
        "corrects",
        Message("api.measurements.too_many_supplier_disputes").arg("max", std::to_string(kMaxPendingDisputes)));
  return ok_status();
}

// accept or reject a pending dispute: operators and the node's supplier; a supplier's own
// (contesting a measurement it did not type in) operators only.
void resolve_measurement(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p,
             bool accept) {
  auto rec = find_visible(app.store, spec, p, req.matches[1]);
  if (!rec) return send_problem(res, rec.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kNode), p, *rec))
    return send_problem(res, Error::make(Code::kForbidden, Message("api.measurements.resolve_forbidden").arg("role", role_name(p.role))),
                        req.path);
  if (rec->tenant_id.empty() && !p.is_operator())  // a dispute a supplier filed: never its own judge
    return send_problem(res, Error::make(Code::kForbidden, Message("api.measurements.supplier_dispute_operator_only")),
                        req.path);
  auto body = body_or_empty(req);
  if (!body) return send_problem(res, body.error(), req.path);
  FieldErrors errs;
  Fields f(*body, "", errs);
  const std::string note = accept ? f.opt_str("note", {.min_len = 1, .max_len = 1024}).value_or("")
                                  : f.str("note", {.min_len = 1, .max_len = 1024});
  f.finish();
  if (!errs.empty()) return send_problem(res, errs.to_error(), req.path);
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("measurements", rec->id);
    if (!cur) return cur.error();
    auto m = decode_record(*cur, decode_measurement, "it cannot be resolved");
    if (!m) return m.error();
    if (m->status != MeasurementStatus::kDisputed)
      return Error::make(Code::kConflict, Message("api.measurements.not_disputed")
                                              .arg("id", cur->id)
                                              .arg("status", enum_name(kMeasurementStatusNames, m->status)));
    if (accept && m->corrects) {  // it replaces what it disputes: unless something else already does
      // Locked: another server correcting the same measurement waits, then sees this correction.
      if (auto old = tx.get_locked("measurements", *m->corrects); !old && old.error().code != Code::kNotFound) return old.error();
      auto siblings = list_all(tx, "measurements", {{"corrects", *m->corrects}});  // indexed: not every one
      if (!siblings) return siblings.error();
      for (const Record& r : *siblings)
        if (r.id != cur->id && measurement_counts(r.body) && r.body.value("corrects", "") == *m->corrects)
          return Error::make(Code::kConflict, Message("api.measurements.already_corrected").arg("id", *m->corrects).arg("by", r.id));
    }
    const TimeMs now = app.clock.now();
    m->status = accept ? MeasurementStatus::kAccepted : MeasurementStatus::kRejected;
    m->resolved_by = p.user_id;
    m->resolved_at = now;
    m->resolution_note = note;
    Record r = *cur;
    r.body = to_json(*m);
    if (auto s = store_change(tx, *cur, r, p, accept ? "accept" : "reject", note, now); !s) return s;
    out = std::move(r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  json answer = present(out);
  if (spec.decorate) spec.decorate(app.store, out, p, answer);
  send_json(res, 200, answer);
}

template <bool kAccept>
void resolve_dispute(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                     const Principal& p) {
  resolve_measurement(app, spec, req, res, p, kAccept);
}

}  // namespace

void register_measurement_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "measurements";
  spec.id_prefix = "msr";
  spec.object_kind = ObjectKind::kMeasurement;
  spec.filters = {{"kind", "state"}, {"supplier", "supplier_id"}, {"tenant", "tenant_id"}};
  spec.filter_values["kind"] = enum_names(kMeasurementKindNames);
  spec.updatable = false;
  spec.deletable = false;
  spec.build = [](const json& body, const Principal& p, StoreTx& tx, const Record*) -> Result<Built> {
    auto m = parse_measurement(body);
    if (!m) return m.error();
    auto node = resolve_ref(tx, "nodes", m->node, {}, "node");
    if (!node) return node.error();
    m->node_id = node->id;
    m->recorded_by = p.user_id;
    if (!p.tenant_id.empty()) {  // a tenant's admin: a dispute about hardware the tenant rented
      auto used = tenant_used_node(tx, p.tenant_id, node->id);
      if (!used) return used.error();
      if (!*used) return Error::invalid("node", Message("api.measurements.not_your_node").arg("node", node->name));
      if (auto s = check_dispute_room(tx, p.tenant_id, 1, "node"); !s) return s.error();
      m->status = MeasurementStatus::kDisputed;
      m->tenant_id = p.tenant_id;
    }
    if (m->corrects) {  // the same fact measured again: same kind, same node, corrected once
      auto old = tx.get_locked("measurements", *m->corrects);  // one correction at a time (several servers)
      if (!old && old.error().code != Code::kNotFound) return old.error();
      if (!old) return Error::invalid("corrects", Message("api.resources.not_found").arg("kind", "measurements").arg("ref", *m->corrects));
      auto prior = decode_record(*old, decode_measurement, "it cannot be corrected");
      if (!prior) return prior.error();
      if (prior->node_id != m->node_id || prior->kind != m->kind)
        return Error::invalid("corrects", Message("api.measurements.correction_mismatch")
                                              .arg("kind", enum_name(kMeasurementKindNames, m->kind))
                                              .arg("node", node->name));
      if (prior->gpu != m->gpu)  // a card's benchmark corrects that card's
        return Error::invalid("corrects", Message("api.measurements.correction_other_card")
                                              .arg("gpu", std::to_string(prior->gpu.value_or(0)))
                                              .arg("node", node->name));
      if (!p.is_operator() && !p.supplier_id.empty()) {
        auto own = typed_in_by_supplier(tx, *prior, node->supplier_id);
        if (!own) return own.error();
        if (!*own) {  // contested: counts once an operator accepts it
          if (auto s = check_supplier_dispute_room(tx, node->supplier_id); !s) return s.error();
          m->status = MeasurementStatus::kDisputed;
        }
      }
      auto siblings = list_all(tx, "measurements", {{"corrects", *m->corrects}});  // indexed: not every one
      if (!siblings) return siblings.error();
      for (const Record& r : *siblings)  // a pending or rejected dispute does not stand in the way
        if (measurement_counts(r.body) && r.body.value("corrects", "") == *m->corrects)
          return Error::invalid("corrects", Message("api.measurements.already_corrected").arg("id", *m->corrects).arg("by", r.id));
    }
    if (m->gpu) {
      auto gpus = decode_record(*node, stored_node_cards, "no card measurement can be recorded on it");
      if (!gpus) return gpus.error();
      if (*m->gpu >= static_cast<int64_t>(gpus->size()))
        return Error::invalid("gpu", Message("api.measurements.gpu_index")
                                         .arg("node", node->name)
                                         .arg("gpus", std::to_string(gpus->size()))
                                         .arg("last", std::to_string(static_cast<int64_t>(gpus->size()) - 1)));
    }
    IndexCols idx = index_of(*m);
    idx.supplier_id = node->supplier_id;
    idx.tenant_id = m->tenant_id;
    idx.region = node->region;
    idx.gpu_model = node->gpu_model;
    return Built{to_json(*m), idx};
  };
  // Measurements are public facts about the market's hardware; who disputed one (or recorded it from
  // a tenant's acceptance run) is the tenant's: hidden from every reader but operators, the
  // recorder and that tenant's users, as acceptance runs hide it. The note also from them and the
  // node's supplier, who answers the dispute.
  spec.decorate = [](StoreReader&, const Record& r, const Principal& p, json& out) {
    if (r.tenant_id.empty() || p.is_operator() || r.tenant_id == p.tenant_id ||
        out.value("recorded_by", "") == p.user_id)
      return;
    for (const char* k : {"tenant_id", "recorded_by"}) out.erase(k);
    if (p.supplier_id.empty() || p.supplier_id != r.supplier_id) out.erase("note");
  };
  register_crud(app, srv, spec);
  item_route(app, srv, "POST", "measurements", "accept", resolve_dispute<true>);
  item_route(app, srv, "POST", "measurements", "reject", resolve_dispute<false>);
}

}  // namespace gpurent
