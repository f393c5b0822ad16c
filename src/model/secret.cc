#include "model/secret.h"

namespace gpurent {

namespace {

constexpr StrRule kSecretNameRule{.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};

// The value: a JSON string, not empty, at most 64 KiB, no NUL (it becomes an environment
// variable or a file, and neither carries one). Line breaks and tabs are allowed.
void read_value(const json& body, FieldErrors& errs, std::string& out) {
  if (!body.is_object() || !body.contains("value")) {
    errs.add("value", Message("field.required"));
    return;
  }
  const json& v = body["value"];
  if (!v.is_string()) {
    errs.add("value", Message("secret.value.string"));
    return;
  }
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty())
    errs.add("value", Message("field.not_empty"));
  else if (s.size() > kMaxSecretBytes)
    errs.add("value", Message("secret.value.too_large").arg("max", std::to_string(kMaxSecretBytes)));
  else if (s.find('\0') != std::string::npos)
    errs.add("value", Message("secret.value.nul"));
  else
    out = s;
}

}  // namespace

Result<Secret> parse_secret(const std::string& name, const json& body) {
  FieldErrors errs;
  Secret s;
  json named = {{"name", name}};
  Fields n(named, "", errs);
  s.name = n.str("name", kSecretNameRule);
  read_value(body, errs, s.value);
  if (body.is_object())
    for (const auto& [k, v] : body.items())
      if (k != "value") errs.add(k, Message("field.unknown"));
  if (!errs.empty()) return errs.to_error();
  return s;
}

Result<Secret> decode_secret(const json& body) {
  const auto text = [&](const char* key) {
    return body.is_object() && body.contains(key) && body[key].is_string() ? body[key].get<std::string>() : "";
  };
  json value = json::object();
  if (body.is_object() && body.contains("value")) value["value"] = body["value"];
  auto s = parse_secret(text("name"), value);
  if (!s) return s.error();
  s->project_id = text("project_id");
  s->tenant_id = text("tenant_id");
  if (s->project_id.empty() || s->tenant_id.empty())
    return Error::invalid("project_id", Message("field.required"));
  return s;
}

json to_stored_json(const Secret& s) {
  return {{"name", s.name}, {"value", s.value}, {"project_id", s.project_id}, {"tenant_id", s.tenant_id}};
}

json to_public_json(const Secret& s) {
  return {{"name", s.name}, {"project_id", s.project_id}, {"size_bytes", s.value.size()}};
}

IndexCols index_of(const Secret& s) {
  IndexCols c;
  c.name = s.project_id + "/" + s.name;  // names are unique per tenant in the store: per project here
  c.tenant_id = s.tenant_id;
  c.project_id = s.project_id;
  return c;
}

}  // namespace gpurent
