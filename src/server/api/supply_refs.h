// Resolving a supply-side object's supplier reference (nodes, offers): suppliers may only name
// themselves; the supplier must exist. Used inside the writer's transaction.
#pragma once

#include <string>

#include "server/api/resources.h"

namespace gpurent {

// Returns the supplier record the reference names, checking it is visible to p for writing.
inline Result<Record> resolve_supplier(StoreTx& tx, const Principal& p, const std::string& ref) {
  std::map<std::string, std::string> scope;
  if (!p.is_operator()) scope["supplier_id"] = p.supplier_id.empty() ? "-" : p.supplier_id;
  return resolve_ref(tx, "suppliers", ref, scope, "supplier");
}

}  // namespace gpurent
