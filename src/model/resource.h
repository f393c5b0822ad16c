// Conventions shared by every resource type of the domain model (pure C++, no I/O).
//
// Each resource file (supplier.h, node.h, offer.h, tenant.h, project.h, user.h, job.h) offers:
//   struct X { ... };                                   // typed value
//   Result<X> parse_x(const json& body);                // validate a create/update body; errors name
//                                                       //   the field path and reason (core/fields.h)
//   json to_json(const X&);                             // canonical document (what the API returns,
//                                                       //   minus the server-set keys below)
//   IndexCols index_of(const X&);                       // columns the store indexes
// References to other resources are strings holding an id ("sup_...") or a name; the server
// resolves and checks them (existence, tenant scope) — the model checks only their format.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/fields.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

// Keys the server sets; accepted (and ignored) in bodies so a GET result can be PUT back.
inline void ignore_server_keys(Fields& f) {
  f.ignore({"id", "created_at", "updated_at", "version"});
}

struct IndexCols {
  std::string name;
  std::string tenant_id;
  std::string supplier_id;
  std::string project_id;
  std::string state;
  std::string region;
  std::string gpu_model;
};

// A reference field: an id with the given prefix ("sup_…") or a slug name.
inline constexpr const char* kRefPattern = "([a-z]{2,4}_[0-9a-f]{16})|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)";
inline constexpr const char* kRefHelp = "pattern.ref";

}  // namespace gpurent
