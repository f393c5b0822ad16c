// Authentication (bearer tokens, stored as SHA-256 hashes) and the caller's identity.
// API tokens look like "gpr_<64 hex>"; the secret is shown once at creation and never stored.
// Thread-safe (reads the store only).
#pragma once

#include <string>

#include <httplib.h>

#include "core/clock.h"
#include "model/user.h"
#include "core/result.h"
#include "server/services/principal.h"
#include "server/services/token_secret.h"
#include "store/store.h"

namespace gpurent {

// Reads "Authorization: Bearer …"; kUnauthorized when missing, malformed, unknown, revoked or expired.
Result<Principal> authenticate(const httplib::Request& req, StoreReader& store, const Clock& clock);

}  // namespace gpurent
