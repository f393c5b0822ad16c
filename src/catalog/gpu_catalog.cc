#include "catalog/gpu_catalog.h"

#include "core/fields.h"
#include "core/yaml_json.h"

namespace gpurent {

namespace {

constexpr size_t kMaxModels = 1000;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Every id and alias, across all entries, must be unique ignoring case. Works on the raw document
// so the paths keep their list positions even where an entry has other errors.
void check_unique_names(const json& models, FieldErrors& errs) {
  struct Owner {
    std::string path;
    std::string id;
  };
  std::unordered_map<std::string, Owner> seen;
  auto claim = [&](const std::string& name, const std::string& path, const std::string& id) {
    auto [it, inserted] = seen.emplace(lower(name), Owner{path, id});
    if (inserted) return;
    if (it->second.id.empty())
      errs.add(path, Message("gpu_model.catalog.name_taken").arg("name", name).arg("other", it->second.path));
    else
      errs.add(path, Message("gpu_model.catalog.name_taken_by_id")
                         .arg("name", name)
                         .arg("other", it->second.path)
                         .arg("id", it->second.id));
  };
  for (size_t i = 0; i < models.size(); ++i) {
    const json& m = models[i];
    if (!m.is_object()) continue;
    const std::string base = "models[" + std::to_string(i) + "]";
    std::string id;
    if (auto it = m.find("id"); it != m.end() && it->is_string()) {
      id = it->get<std::string>();
      if (!id.empty()) claim(id, base + ".id", id);
    }
    auto al = m.find("aliases");
    if (al == m.end() || !al->is_array()) continue;
    for (size_t j = 0; j < al->size(); ++j) {
      const json& a = (*al)[j];
      if (a.is_string() && !a.get_ref<const std::string&>().empty())
        claim(a.get<std::string>(), base + ".aliases[" + std::to_string(j) + "]", id);
    }
  }
}

}  // namespace

Result<GpuCatalog> GpuCatalog::from_json(const json& doc) {
  FieldErrors errs;
  Fields top(doc, "", errs);
  GpuCatalog cat;
  if (top.valid_object()) {
    top.objects("models", true, kMaxModels, [&](Fields& f, size_t) { cat.models_.push_back(read_gpu_model(f)); });
    top.finish();
    const json* models = doc.contains("models") ? &doc["models"] : nullptr;
    if (models && models->is_array()) {
      if (models->empty()) errs.add("models", Message("gpu_model.catalog.empty"));
      if (models->size() <= kMaxModels) check_unique_names(*models, errs);
    }
  }
  if (!errs.empty()) return errs.to_error();
  for (size_t i = 0; i < cat.models_.size(); ++i) {
    const GpuModel& m = cat.models_[i];
    cat.index_.emplace(lower(m.id), i);
    for (const auto& a : m.aliases) cat.index_.emplace(lower(a), i);
  }
  return cat;
}

Result<GpuCatalog> GpuCatalog::parse(const std::string& yaml_text) {
  auto doc = parse_json_or_yaml(yaml_text);
  if (!doc) return doc.error();
  return from_json(*doc);
}

const GpuModel* GpuCatalog::find(std::string_view id_or_alias) const {
  auto it = index_.find(lower(id_or_alias));
  return it == index_.end() ? nullptr : &models_[it->second];
}

const GpuModel* read_gpu_model_ref(Fields& f, const GpuCatalog& catalog, const char* key) {
  if (!f.has(key)) {
    f.error(key, Message("field.required"));
    f.raw(key);
    return nullptr;
  }
  auto id = f.opt_str(key, {.max_len = 64});
  if (!id) return nullptr;
  const GpuModel* m = catalog.find(*id);
  if (!m) f.error(key, Message("gpu_model.unknown").arg("model", *id));
  return m;
}

}  // namespace gpurent
