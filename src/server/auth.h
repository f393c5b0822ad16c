// Authentication (bearer tokens, stored as SHA-256 hashes) and the caller's identity.
// API tokens look like "gpr_<64 hex>"; the secret is shown once at creation and never stored.
// Thread-safe (reads the store only).
#pragma once

#include <string>

#include <httplib.h>

#include "core/clock.h"
#include "model/user.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

struct Principal {
  std::string user_id;
  std::string token_id;
  Role role = Role::kViewer;
  std::string tenant_id;    // tenant roles
  std::string supplier_id;  // supplier role

  bool is_operator() const { return is_operator_role(role); }
};

// "gpr_" + 64 hex digits from a CSPRNG.
std::string new_token_secret();
std::string token_hash(const std::string& secret);

// Reads "Authorization: Bearer …"; kUnauthorized when missing, malformed, unknown, revoked or expired.
Result<Principal> authenticate(const httplib::Request& req, Store& store, const Clock& clock);

}  // namespace gpurent
