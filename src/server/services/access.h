// Who may see and change what, and how a reference names an object: the permission matrix
// (model/user.h) applied to stored records, and reference resolution inside the writer's
// transaction. Shared by the API's routes (api/resources.h) and the services that act for a
// caller (usage_ingest.h). Stateless; thread-safe.
#pragma once

#include <map>
#include <string>

#include "model/user.h"
#include "server/services/principal.h"
#include "store/store.h"

namespace gpurent {

bool looks_like_id(const std::string& s);  // "nod_3f9a0c2b7d1e4a65"
Error forbidden(const std::string& why);
Error forbidden(Message why);  // the reason as a message code, worded in the caller's language
// Whether a scope from the permission matrix reaches record r for principal p.
bool in_scope(Scope s, const Principal& p, const Record& r);
Scope read_scope(const Principal& p, ObjectKind k);
Scope write_scope(const Principal& p, ObjectKind k);
// Resolves a reference field inside a transaction to its record. scope narrows name lookups
// (e.g. {"tenant_id", t}). Errors name `field`.
Result<Record> resolve_ref(StoreTx& tx, const std::string& kind, const std::string& ref,
                           const std::map<std::string, std::string>& scope, const std::string& field);
// The tenant a new tenant-owned object (a project, a volume) belongs to, from its "tenant" field
// `ref`: a tenant user's own tenant (the field may be omitted, and names nothing else); operators
// must name one. Errors name "tenant".
Result<Record> owning_tenant(StoreTx& tx, const Principal& p, const std::string& ref);

}  // namespace gpurent
