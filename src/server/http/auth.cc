#include "server/http/auth.h"

#include "core/ids.h"

namespace gpurent {

Result<Principal> authenticate(const httplib::Request& req, StoreReader& store, const Clock& clock) {
  const std::string h = req.get_header_value("Authorization");
  if (h.empty()) return Error::make(Code::kUnauthorized, Message("auth.missing_header"));
  if (h.rfind("Bearer ", 0) != 0) return Error::make(Code::kUnauthorized, Message("auth.not_bearer"));
  std::string secret = h.substr(7);
  while (!secret.empty() && secret.back() == ' ') secret.pop_back();
  if (secret.size() != 68 || secret.rfind("gpr_", 0) != 0)
    return Error::make(Code::kUnauthorized, Message("auth.malformed_token"));
  auto found = store.token_by_hash(token_hash(secret));
  if (!found) return found.error();  // the store could not say: not "unknown token" (clients drop those)
  const std::optional<TokenRow>& row = *found;
  if (!row) return Error::make(Code::kUnauthorized, Message("auth.unknown_token"));
  if (row->revoked) return Error::make(Code::kUnauthorized, Message("auth.revoked"));
  if (row->expires_at != 0 && row->expires_at <= clock.now())
    return Error::make(Code::kUnauthorized, Message("auth.expired").arg("at", format_rfc3339(row->expires_at)));
  // The user's current role and scope, not the ones at token creation: a demoted or deleted user
  // loses its powers at once.
  auto user = store.get("users", row->user_id);
  if (!user && user.error().code != Code::kNotFound) return user.error();
  if (!user) return Error::make(Code::kUnauthorized, Message("auth.user_gone"));
  auto role = stored_user_role(user->body);
  if (!role) return Error::make(Code::kUnauthorized, Message("auth.unknown_role"));
  return Principal{row->user_id, row->id, *role, user->tenant_id, user->supplier_id};
}

}  // namespace gpurent
