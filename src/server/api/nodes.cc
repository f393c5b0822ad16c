// /api/v1/nodes: servers with their whole hardware truth. A node's site must be one of its
// supplier's sites; suppliers manage their own nodes.
#include "model/node.h"
#include "model/supplier.h"
#include "server/api/resources.h"
#include "server/api/supply_refs.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

// A card is in one node: its UUID is what the meters name it by (docs/resources/usage.md), so a
// UUID another node lists already is a 409 naming gpus[k].uuid (the other node, its record read
// under the lock of this write, is named). A node of the same supplier and name is left to the
// name's own check (409 naming `name`).
Status check_uuids_free(StoreTx& tx, const json& body, const Record* existing, const Node& n) {
  std::map<std::string, size_t> mine;  // uuid -> position in the body's list
  const json gpus = body.value("gpus", json::array());
  for (size_t k = 0; gpus.is_array() && k < gpus.size(); ++k)
    if (gpus[k].is_object() && gpus[k].value("uuid", json()).is_string()) mine.emplace(gpus[k]["uuid"].get<std::string>(), k);
  if (mine.empty()) return ok_status();
  // The supplier's row first (shared, as the write holds it anyway), then the lock row: the
  // documented order (docs/deployment.md).
  if (auto sup = tx.get_shared("suppliers", n.supplier_id); !sup) return sup.error();
  if (auto l = take_write_lock(tx, "node-gpu-uuids", "the nodes' GPU UUIDs"); !l) return l;
  auto all = list_all(tx, "nodes", {});
  if (!all) return all.error();
  for (const Record& other : *all) {
    if ((existing && other.id == existing->id) || (other.supplier_id == n.supplier_id && other.name == n.name)) continue;
    const json theirs = other.body.value("gpus", json::array());
    for (size_t j = 0; theirs.is_array() && j < theirs.size(); ++j) {
      if (!theirs[j].is_object() || !theirs[j].value("uuid", json()).is_string()) continue;
      auto it = mine.find(theirs[j]["uuid"].get<std::string>());
      if (it == mine.end()) continue;
      const Message why = Message("api.nodes.uuid_taken").arg("uuid", it->first).arg("node", other.name);
      Error e = Error::make(Code::kConflict, field_detail("gpus[" + std::to_string(it->second) + "].uuid", why));
      e.fields.push_back({"gpus[" + std::to_string(it->second) + "].uuid", render_en(why), why});
      return e;
    }
  }
  return ok_status();
}

}  // namespace

void register_node_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "nodes";
  spec.id_prefix = "nod";
  spec.object_kind = ObjectKind::kNode;
  spec.filters = {{"supplier", "supplier_id"}, {"region", "region"}, {"gpu_model", "gpu_model"},
                  {"state", "state"},          {"name", "name"}};
  spec.filter_values["state"] = enum_names(kNodeStates);
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record* existing) -> Result<Built> {
    auto n = parse_node(body, app.catalog);
    if (!n) return n.error();
    auto sup = resolve_supplier(tx, p, n->supplier);
    if (!sup) return sup.error();
    n->supplier_id = sup->id;
    auto supplier = decode_record(*sup, parse_supplier, "no node can be listed under it");
    if (!supplier) return supplier.error();
    if (!supplier->has_site(n->site))
      return Error::invalid("site", Message("api.suppliers.no_site").arg("supplier", sup->name).arg("site", n->site));
    if (auto s = check_uuids_free(tx, body, existing, *n); !s) return s.error();
    return Built{to_json(*n), index_of(*n)};
  };
  spec.warnings = [](StoreReader& store, const Record& r) {
    std::vector<Message> out;
    auto sold = node_is_sold(store, r);
    if (sold && !*sold)
      out.push_back(Message("api.nodes.no_offer").arg("node", r.name).arg("model", r.gpu_model).arg("region", r.region));
    return out;
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
