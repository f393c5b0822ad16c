#include "server/services/access.h"

#include <regex>

#include "core/fields.h"

namespace gpurent {

bool looks_like_id(const std::string& s) {
  static const std::regex kId("[a-z]{2,4}_[0-9a-f]{16}");
  return std::regex_match(s, kId);
}

Error forbidden(const std::string& why) { return Error::make(Code::kForbidden, why); }
Error forbidden(Message why) { return Error::make(Code::kForbidden, std::move(why)); }

Scope read_scope(const Principal& p, ObjectKind k) { return role_scope(p.role, k, Verb::kRead); }
Scope write_scope(const Principal& p, ObjectKind k) { return role_scope(p.role, k, Verb::kWrite); }

bool in_scope(Scope s, const Principal& p, const Record& r) {
  switch (s) {
    case Scope::kAll: return true;
    case Scope::kOwnTenant: return !p.tenant_id.empty() && r.tenant_id == p.tenant_id;
    case Scope::kOwnSupplier: return !p.supplier_id.empty() && r.supplier_id == p.supplier_id;
    case Scope::kSelf: return r.kind == "users" && r.id == p.user_id;
    case Scope::kNone: return false;
  }
  return false;
}

Result<Record> resolve_ref(StoreTx& tx, const std::string& kind, const std::string& ref,
                           const std::map<std::string, std::string>& scope, const std::string& field) {
  if (ref.empty()) return Error::invalid(field, FieldReason{"field.required"}.message());
  auto missing = [&] { return Error::invalid(field, Message("access.ref_not_visible").arg("kind", kind).arg("ref", ref)); };
  if (looks_like_id(ref)) {
    auto r = tx.get(kind, ref);
    if (!r) return missing();
    for (const auto& [col, val] : scope) {
      if (col == "tenant_id" && r->tenant_id != val) return missing();
      if (col == "supplier_id" && r->supplier_id != val) return missing();
    }
    return r;
  }
  ListQuery q{kind, scope, "", 3};
  q.eq["name"] = ref;
  auto page = tx.list(q);
  if (!page) return page.error();
  if (page->items.empty()) return missing();
  if (page->items.size() > 1) return Error::invalid(field, Message("access.ref_ambiguous").arg("ref", ref));
  return page->items[0];
}

Result<Record> owning_tenant(StoreTx& tx, const Principal& p, const std::string& ref) {
  if (!p.is_operator()) {
    const std::string own = p.tenant_id.empty() ? "-" : p.tenant_id;
    if (ref.empty()) {
      auto t = tx.get("tenants", own);
      if (!t) return Error::invalid("tenant", Message("api.projects.tenant_gone"));
      return t;
    }
    return resolve_ref(tx, "tenants", ref, {{"tenant_id", own}}, "tenant");
  }
  if (ref.empty()) return Error::invalid("tenant", Message("api.projects.tenant_required"));
  return resolve_ref(tx, "tenants", ref, {}, "tenant");
}

}  // namespace gpurent
