#include "server/dashboard/days.h"

#include <algorithm>

#include "billing/firewall.h"
#include "server/api/resources.h"

namespace gpurent {

Result<std::vector<Record>> dashboard_tenants(App& app, const Principal& p, const std::optional<std::string>& tenant) {
  const KindSpec& spec = app.kinds.at("tenants");
  std::vector<Record> out;
  if (p.is_operator()) {
    if (tenant) {
      auto t = find_visible(app.store, spec, p, *tenant);
      if (!t) return t.error();
      out.push_back(std::move(*t));
    } else {
      auto all = list_all(app.store, "tenants");
      if (!all) return all.error();
      out = std::move(*all);
    }
  } else {
    if (p.tenant_id.empty()) return forbidden(Message("dashboard.costs.tenants_only"));
    if (tenant) {
      auto t = find_visible(app.store, spec, p, *tenant);
      if (!t || t->id != p.tenant_id) return Error::make(Code::kNotFound, Message("dashboard.no_such_tenant"));
    }
    auto own = app.store.get("tenants", p.tenant_id);
    if (!own) return own.error();
    out.push_back(std::move(*own));
  }
  std::sort(out.begin(), out.end(), [](const Record& a, const Record& b) { return a.name < b.name; });
  return out;
}


DayInvoices::DayInvoices(StoreReader& store, const GpuCatalog& catalog, std::string tenant_id, TimeMs now)
    : source_(store, catalog, std::move(tenant_id), now) {}

Result<const Invoice*> DayInvoices::day(TimeMs day) {
  if (auto it = cache_.find(day); it != cache_.end()) return &it->second;
  auto inv = source_.day(day);
  if (!inv) return inv.error();
  return &(cache_[day] = std::move(*inv));
}

}  // namespace gpurent
