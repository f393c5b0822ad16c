#include "server/http/auth.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "core/ids.h"

namespace gpurent {

namespace {

// The store could not say (a PostgreSQL outage, say): 503, never "unknown token" (clients drop
// those). Its own words — host, database, user — go to the log, not to a caller not yet known.
Error store_unavailable(const Error& e) {
  spdlog::error("{}", nlohmann::json({{"event", "auth_store_failed"}, {"error", e.message}})
                          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return Error::make(Code::kUnavailable, Message("auth.store_unavailable"));
}

}  // namespace

Result<Principal> authenticate(const httplib::Request& req, StoreReader& store, const Clock& clock) {
  const std::string h = req.get_header_value("Authorization");
  if (h.empty()) return Error::make(Code::kUnauthorized, Message("auth.missing_header"));
  if (h.rfind("Bearer ", 0) != 0) return Error::make(Code::kUnauthorized, Message("auth.not_bearer"));
  std::string secret = h.substr(7);
  while (!secret.empty() && secret.back() == ' ') secret.pop_back();
  if (secret.size() != 68 || secret.rfind("gpr_", 0) != 0)
    return Error::make(Code::kUnauthorized, Message("auth.malformed_token"));
  auto found = store.token_by_hash(token_hash(secret));
  if (!found) return store_unavailable(found.error());
  const std::optional<TokenRow>& row = *found;
  if (!row) return Error::make(Code::kUnauthorized, Message("auth.unknown_token"));
  if (row->revoked) return Error::make(Code::kUnauthorized, Message("auth.revoked"));
  if (row->expires_at != 0 && row->expires_at <= clock.now())
    return Error::make(Code::kUnauthorized, Message("auth.expired").arg("at", format_rfc3339(row->expires_at)));
  // The user's current role and scope, not the ones at token creation: a demoted or deleted user
  // loses its powers at once.
  auto user = store.get("users", row->user_id);
  if (!user && user.error().code != Code::kNotFound) return store_unavailable(user.error());
  if (!user) return Error::make(Code::kUnauthorized, Message("auth.user_gone"));
  auto role = stored_user_role(user->body);
  if (!role) return Error::make(Code::kUnauthorized, Message("auth.unknown_role"));
  return Principal{row->user_id, row->id, *role, user->tenant_id, user->supplier_id};
}

}  // namespace gpurent
