// Who acts: the user behind a request's token (server/http/auth.h reads it), or a service acting
// in its own name (usage_ingest.h system_principal). Services decide with it what a caller may
// see and change; they never see the HTTP request. A value type.
#pragma once

#include <string>

#include "model/user.h"

namespace gpurent {

struct Principal {
  std::string user_id;
  std::string token_id;
  Role role = Role::kViewer;
  std::string tenant_id;    // tenant roles
  std::string supplier_id;  // supplier role

  bool is_operator() const { return is_operator_role(role); }
};

}  // namespace gpurent
