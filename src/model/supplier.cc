#include "model/supplier.h"

#include "core/json_put.h"

#include <set>

namespace gpurent {
namespace {

constexpr const char* kSupplierEmailPattern = "[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}";

// A list of enum wire names: each element checked, duplicates refused.
std::vector<Certification> parse_certifications(Fields& f, const char* key) {
  std::vector<Certification> out;
  const json* v = f.raw(key);
  if (!v) return out;
  if (!v->is_array()) {
    f.error(key, Message("supplier.certifications.not_list").arg("choices", enum_choices(kCertifications)));
    return out;
  }
  if (v->size() > std::size(kCertifications)) {
    f.error(key, Message("field.max_items").arg("max", std::to_string(std::size(kCertifications))));
    return out;
  }
  std::set<Certification> seen;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    std::optional<Certification> c;
    if (e.is_string()) c = enum_parse(kCertifications, e.get_ref<const std::string&>());
    if (!c) {
      const std::string at = std::string(key) + "[" + std::to_string(i) + "]";
      if (e.is_string())
        f.error(at, Message("field.unknown_value")
                        .arg("value", e.get<std::string>())
                        .arg("choices", enum_choices(kCertifications)));
      else
        f.error(at, Message("supplier.certifications.not_string").arg("choices", enum_choices(kCertifications)));
      continue;
    }
    if (!seen.insert(*c).second) {
      f.error(std::string(key) + "[" + std::to_string(i) + "]",
              Message("supplier.certifications.duplicate").arg("certification", enum_name(kCertifications, *c)));
      continue;
    }
    out.push_back(*c);
  }
  return out;
}

DueDiligence parse_due_diligence(Fields& f) {
  DueDiligence d;
  d.gpu_supply_days = f.opt_integer("gpu_supply_days", 0, 365);
  d.allreduce_8gpu_1gb_ms = f.opt_integer("allreduce_8gpu_1gb_ms", 1, 600'000);
  d.fault_locate_minutes = f.opt_integer("fault_locate_minutes", 0, 43'200);
  d.restore_hours = f.opt_integer("restore_hours", 0, 8'760);
  d.cuda_update_days = f.opt_integer("cuda_update_days", 0, 3'650);
  if (const json* v = f.raw("exit_path_tested")) {  // absent or null: not answered
    if (v->is_boolean()) d.exit_path_tested = v->get<bool>();
    else f.error("exit_path_tested", Message("field.boolean"));
  }
  d.monthly_failure_rate_bp = f.opt_integer("monthly_failure_rate_bp", 0, 10'000);
  d.notes = f.opt_str("notes", {.max_len = 4000});
  return d;
}

}  // namespace

Result<Supplier> parse_supplier(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  Supplier s;
  if (f.valid_object()) {
    s.name = f.str("name", kSlugRule);
    s.display_name = f.opt_str("display_name", {.max_len = 256}).value_or(s.name);
    s.region = f.str("region", kRegionRule);
    s.country = f.str("country", {.min_len = 2, .max_len = 2, .pattern = kCountryPattern, .pattern_help = kCountryHelp});
    std::set<std::string> site_names;
    f.objects("sites", false, 64, [&](Fields& sf, size_t) {
      Site site;
      site.name = sf.str("name", kSlugRule);
      if (!site.name.empty() && !site_names.insert(site.name).second)
        sf.error("name", Message("supplier.site.duplicate_name").arg("site", site.name));
      site.region = sf.str("region", kRegionRule);
      site.city = sf.str("city", {.max_len = 100});
      site.tier = sf.opt_integer("tier", 1, 4);
      site.country =
          sf.opt_str("country", {.min_len = 2, .max_len = 2, .pattern = kCountryPattern, .pattern_help = kCountryHelp});
      s.sites.push_back(std::move(site));
    });
    s.certifications = parse_certifications(f, "certifications");
    f.object("due_diligence", false, [&](Fields& df) { s.due_diligence = parse_due_diligence(df); });
    s.contact_email = f.str("contact_email", {.min_len = 6, .max_len = 254, .pattern = kSupplierEmailPattern,
                                              .pattern_help = "pattern.supplier_email"});
    ignore_server_keys(f);
    f.finish();
  }
  if (!errs.empty()) return errs.to_error();
  return s;
}

json to_json(const Supplier& s) {
  json sites = json::array();
  for (const Site& site : s.sites) {
    json j = {{"name", site.name}, {"region", site.region}, {"city", site.city}};
    put_opt(j, "tier", site.tier);
    put_opt(j, "country", site.country);
    sites.push_back(std::move(j));
  }
  json certs = json::array();
  for (Certification c : s.certifications) certs.push_back(enum_name(kCertifications, c));
  const DueDiligence& d = s.due_diligence;
  json dd = json::object();
  put_opt(dd, "gpu_supply_days", d.gpu_supply_days);
  put_opt(dd, "allreduce_8gpu_1gb_ms", d.allreduce_8gpu_1gb_ms);
  put_opt(dd, "fault_locate_minutes", d.fault_locate_minutes);
  put_opt(dd, "restore_hours", d.restore_hours);
  put_opt(dd, "cuda_update_days", d.cuda_update_days);
  put_opt(dd, "exit_path_tested", d.exit_path_tested);
  put_opt(dd, "monthly_failure_rate_bp", d.monthly_failure_rate_bp);
  put_opt(dd, "notes", d.notes);
  return json{{"name", s.name},
              {"display_name", s.display_name},
              {"region", s.region},
              {"country", s.country},
              {"sites", std::move(sites)},
              {"certifications", std::move(certs)},
              {"due_diligence", std::move(dd)},
              {"contact_email", s.contact_email}};
}

IndexCols index_of(const Supplier& s) {
  IndexCols c;
  c.name = s.name;
  c.region = s.region;
  return c;
}

}  // namespace gpurent
