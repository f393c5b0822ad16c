// First-start bootstrap: an operator admin user and its API token, kept in a file (mode 600) so the
// person who runs the server can use the CLI at once. Idempotent: an existing valid token in the
// file is kept; a missing or revoked one is replaced by a fresh token for the admin user.
#pragma once

#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "server/services/control_loop.h"
#include "store/store.h"

namespace gpurent {

struct AdminCredentials {
  std::string user_id;
  std::string token;       // the secret
  std::string token_file;  // where it is kept
  bool minted = false;     // the token was minted by this call (first start, or the file's was lost)
};

Result<AdminCredentials> ensure_admin(StoreReader& store, ControlLoop& loop, const Clock& clock, const std::string& token_file);

// Writes a secret to `path` with mode 0600 (atomically: temp file + rename).
Status write_secret_file(const std::string& path, const std::string& secret);

}  // namespace gpurent
